// Comparisons that can decide (issue 17, item 2). Simulations of the same scenario and seed see the same
// batches, so `compare` pairs them per iteration and tests the log ratios (a t test): with the quickstart's
// 3 iterations a real change is a verdict, not "inconclusive". Measured runs keep the U test. Reports of
// other scenarios or backends, or of the same scenario with other settings, come with a warning.
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "reports/compare.hpp"
#include "reports/json_report.hpp"
#include "reports/metric_table.hpp"
#include "tests/unit/reports/sample_run.hpp"

namespace zb::reports {
namespace {

nlohmann::json report_of(const test::SampleOptions& options) {
  return test::sample_report_json(options);
}

test::SampleOptions slower(double time_scale) {
  test::SampleOptions options;
  options.time_scale = time_scale;
  return options;
}

const MetricComparison& row(const ComparisonReport& report, const std::string& system,
                            const std::string& metric) {
  for (const MetricComparison& m : report.metrics) {
    if (m.system == system && m.metric == metric) return m;
  }
  throw std::runtime_error("no such row");
}

bool has_warning(const ComparisonReport& report, const std::string& text) {
  for (const std::string& warning : report.warnings) {
    if (warning.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(PairedCompare, ThreeSimulatedIterationsTwentyPercentSlowerIsARegression) {
  const ComparisonReport result = compare_reports(report_of({}), report_of(slower(1.2)), {});
  ASSERT_TRUE(result.paired) << result.pairing_reason;
  const MetricComparison& time = row(result, "zeppelin", "iteration_seconds");
  EXPECT_EQ(time.test_used, ComparisonTest::paired_t);
  EXPECT_EQ(time.paired.pairs, 3);
  EXPECT_NEAR(time.change, 0.2, 1e-12);
  EXPECT_NEAR(time.paired.mean_log_ratio, std::log(1.2), 1e-12);
  EXPECT_EQ(time.verdict, Verdict::regression);
  EXPECT_EQ(row(result, "ring-cp", "tokens_per_second").verdict, Verdict::regression);
  EXPECT_EQ(exit_code_of(result), ExitCode::check_failed);
  EXPECT_NE(format_comparison_text(result).find("paired per iteration (t test on log ratios)"),
            std::string::npos);
}

TEST(PairedCompare, SameSimulationTwiceIsNoChange) {
  const ComparisonReport result = compare_reports(report_of({}), report_of({}), {});
  ASSERT_TRUE(result.paired);
  const MetricComparison& time = row(result, "zeppelin", "iteration_seconds");
  EXPECT_EQ(time.p_value, 1.0);
  EXPECT_EQ(time.verdict, Verdict::unchanged);
  EXPECT_EQ(exit_code_of(result), ExitCode::ok);
  EXPECT_TRUE(result.warnings.empty() || !has_warning(result, "other settings"));
}

TEST(PairedCompare, AChangeThatVariesByBatchIsTestedAgainstItsSpread) {
  // +2 % on average, −1 % to +5 % by batch: significant or not, it is below the 5 % threshold.
  test::SampleOptions candidate = slower(1.02);
  candidate.jitter = 0.03;
  const ComparisonReport small = compare_reports(report_of({}), report_of(candidate), {});
  ASSERT_TRUE(small.paired);
  EXPECT_NE(row(small, "zeppelin", "iteration_seconds").verdict, Verdict::regression);
  // +30 % with the same spread: the t test on 3 pairs decides.
  candidate.time_scale = 1.3;
  const ComparisonReport large = compare_reports(report_of({}), report_of(candidate), {});
  const MetricComparison& time = row(large, "zeppelin", "iteration_seconds");
  EXPECT_GT(time.paired.sd_log_ratio, 0.0);
  EXPECT_LT(time.p_value, 0.05);
  EXPECT_EQ(time.verdict, Verdict::regression);
}

TEST(PairedCompare, OtherSeedsAreComparedUnpairedWithAWarning) {
  test::SampleOptions other_seed = slower(1.2);
  other_seed.seed = 2;
  const ComparisonReport result = compare_reports(report_of({}), report_of(other_seed), {});
  EXPECT_FALSE(result.paired);
  EXPECT_NE(result.pairing_reason.find("seeds differ (1 vs 2)"), std::string::npos) << result.pairing_reason;
  EXPECT_EQ(row(result, "zeppelin", "iteration_seconds").test_used, ComparisonTest::mann_whitney_u);
  EXPECT_EQ(row(result, "zeppelin", "iteration_seconds").verdict, Verdict::inconclusive);  // 3 vs 3: p ≥ 0.1
  EXPECT_TRUE(has_warning(result, "scenario \"sample\" ran with other settings (after overrides) at /seed"));
}

TEST(PairedCompare, MeasuredRunsKeepTheUTest) {
  test::SampleOptions base;
  base.backend = "cuda";
  base.iterations = 8;
  test::SampleOptions candidate = base;
  candidate.time_scale = 1.2;
  const ComparisonReport result = compare_reports(report_of(base), report_of(candidate), {});
  EXPECT_FALSE(result.paired);
  EXPECT_NE(result.pairing_reason.find("measured runs"), std::string::npos);
  const MetricComparison& time = row(result, "zeppelin", "iteration_seconds");
  EXPECT_EQ(time.test_used, ComparisonTest::mann_whitney_u);
  EXPECT_EQ(time.verdict, Verdict::regression);  // 8 vs 8, fully separated: exact p ≈ 0.00016
}

TEST(PairedCompare, DifferentBackendsAndScenariosWarn) {
  test::SampleOptions cuda;
  cuda.backend = "cuda";
  const ComparisonReport backends = compare_reports(report_of({}), report_of(cuda), {});
  EXPECT_FALSE(backends.paired);
  EXPECT_TRUE(has_warning(backends, "different backends (sim vs cuda)"));

  test::SampleOptions other;
  other.scenario_name = "other";
  const ComparisonReport scenarios = compare_reports(report_of({}), report_of(other), {});
  EXPECT_FALSE(scenarios.paired);
  EXPECT_TRUE(has_warning(scenarios, "different scenarios (\"sample\" vs \"other\")"));
}

TEST(PairedCompare, RunsOfOtherLengthsPairTheirSharedIterations) {
  test::SampleOptions longer = slower(1.2);
  longer.iterations = 5;
  const ComparisonReport result = compare_reports(report_of({}), report_of(longer), {});
  ASSERT_TRUE(result.paired) << result.pairing_reason;
  EXPECT_NE(result.pairing_reason.find("on the same 3 batches"), std::string::npos) << result.pairing_reason;
  const MetricComparison& time = row(result, "zeppelin", "iteration_seconds");
  EXPECT_EQ(time.paired.pairs, 3);
  EXPECT_EQ(time.verdict, Verdict::regression);
  EXPECT_TRUE(has_warning(result, "/workload/iterations"));
}

TEST(PairedCompare, SameSeedButOtherBatchesIsNotPaired) {
  nlohmann::json candidate = report_of({});
  candidate["workload"]["batches"][1]["lengths_fnv1a"] = "0000000000000000";
  const ComparisonReport result = compare_reports(report_of({}), candidate, {});
  EXPECT_FALSE(result.paired);
  EXPECT_NE(result.pairing_reason.find("different batches"), std::string::npos);
}

TEST(PairedCompare, SchemaOneReportsStillCompareUnpaired) {
  nlohmann::json old = report_of({});
  old["schema_version"] = 1;
  old["context"] = nlohmann::json{{"backend", "sim"}, {"simulated", true}};
  old.erase("run");
  old.erase("provenance");
  const ComparisonReport result = compare_reports(old, report_of({}), {});
  EXPECT_FALSE(result.paired);
  EXPECT_NE(result.pairing_reason.find("schema 1"), std::string::npos);
  EXPECT_FALSE(has_warning(result, "different backends"));  // read from the old context section
}

// A figure whose name nests in report.json ("iteration_parts/...") is paired per iteration like any other:
// a table that marks one compared finds its values where the JSON report wrote them.
TEST(PairedCompare, NestedFiguresArePairedPerIteration) {
  std::vector<MetricInfo> table(metric_table().begin(), metric_table().end());
  for (MetricInfo& m : table) {
    if (m.name == "iteration_parts/layers_seconds") m.compared = true;
  }
  const ComparisonReport result = compare_reports(report_of({}), report_of(slower(1.2)), {}, table);
  ASSERT_TRUE(result.paired);
  const MetricComparison& layers = row(result, "zeppelin", "iteration_parts/layers_seconds");
  EXPECT_EQ(layers.paired.pairs, 3);
  EXPECT_EQ(layers.verdict, Verdict::regression);
}

TEST(PairedTTest, StudentTMatchesClosedForms) {
  // ν = 1 (Cauchy): p = 1 − 2·atan(|t|)/π; ν = 2: p = 1 − |t|/√(t² + 2).
  for (const double t : {0.0, 0.3, 1.0, 2.5, 12.0}) {
    EXPECT_NEAR(student_t_two_sided_p(t, 1), 1 - 2 * std::atan(t) / M_PI, 1e-12) << t;
    EXPECT_NEAR(student_t_two_sided_p(t, 2), 1 - t / std::sqrt(t * t + 2), 1e-12) << t;
  }
  // Tabled critical values: t(0.975; 10) = 2.228138852, t(0.995; 30) = 2.749995654.
  EXPECT_NEAR(student_t_two_sided_p(2.228138852, 10), 0.05, 1e-8);
  EXPECT_NEAR(student_t_two_sided_p(-2.749995654, 30), 0.01, 1e-8);
}

TEST(PairedTTest, IncompleteBetaMatchesClosedForms) {
  for (const double x : {0.01, 0.2, 0.5, 0.77, 0.999}) {
    EXPECT_NEAR(regularized_incomplete_beta(x, 1, 1), x, 1e-13);
    EXPECT_NEAR(regularized_incomplete_beta(x, 3, 1), x * x * x, 1e-13);
    EXPECT_NEAR(regularized_incomplete_beta(x, 1, 4), 1 - std::pow(1 - x, 4), 1e-13);
  }
}

TEST(PairedTTest, LogRatiosOfKnownPairs) {
  // ln ratios 0.1, 0.2, 0.3: mean 0.2, sd 0.1, t = 0.2 / (0.1/√3) = 2√3, ν = 2.
  const PairedTestResult r =
      paired_log_ratio_t_test({1, 1, 1}, {std::exp(0.1), std::exp(0.2), std::exp(0.3)});
  EXPECT_EQ(r.pairs, 3);
  EXPECT_NEAR(r.mean_log_ratio, 0.2, 1e-12);
  EXPECT_NEAR(r.sd_log_ratio, 0.1, 1e-12);
  EXPECT_NEAR(r.t, 2 * std::sqrt(3.0), 1e-9);
  EXPECT_NEAR(r.p_value, 1 - 2 * std::sqrt(3.0) / std::sqrt(12.0 + 2), 1e-9);
  EXPECT_EQ(paired_log_ratio_t_test({2}, {3}).p_value, 1.0);  // one pair: no degree of freedom
  EXPECT_EQ(paired_log_ratio_t_test({1, 2, 4}, {1.1, 2.2, 4.4}).p_value, 0.0);  // the same +10 % everywhere
}

}  // namespace
}  // namespace zb::reports
