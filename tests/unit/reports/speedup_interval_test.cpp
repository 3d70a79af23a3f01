// Statistics in the combined table (issue 31, item 6): every speed-up carries the 95 % interval of the
// paired t test over the iterations (iteration i of both systems ran the same batch), "n/a" where fewer
// than 2 iterations were paired, and the aggregates say in how many scenarios the difference is
// significant (p < 0.05, the same as the interval excluding 1).
#include <gtest/gtest.h>

#include <cmath>

#include <fmt/format.h>

#include "reports/combined_table.hpp"
#include "reports/paired_test.hpp"
#include "tests/unit/reports/sample_run.hpp"

namespace zb::reports {
namespace {

TEST(SpeedupInterval, CriticalValuesMatchClosedForms) {
  // ν = 1: q = tan(π(1 − α)/2); ν = 2: q = √(2c² / (1 − c²)), c = 1 − α; tabled t(0.975; 9) = 2.262157163.
  EXPECT_NEAR(student_t_critical_value(0.05, 1), std::tan(M_PI * 0.95 / 2), 1e-9);
  EXPECT_NEAR(student_t_critical_value(0.05, 2), std::sqrt(2 * 0.95 * 0.95 / (1 - 0.95 * 0.95)), 1e-9);
  EXPECT_NEAR(student_t_critical_value(0.05, 9), 2.262157163, 1e-8);
  EXPECT_NEAR(student_t_critical_value(0.01, 30), 2.749995654, 1e-8);
}

TEST(SpeedupInterval, OfKnownPairs) {
  const double q = std::sqrt(2 * 0.95 * 0.95 / (1 - 0.95 * 0.95));  // ν = 2
  // ln ratios 0.1, 0.2, 0.3: mean 0.2, sd 0.1; p = 1 − 2√3/√14 = 0.074: the interval holds 1.
  const auto wide = paired_ratio_interval({1, 1, 1}, {std::exp(0.1), std::exp(0.2), std::exp(0.3)});
  ASSERT_TRUE(wide.has_value());
  EXPECT_EQ(wide->pairs, 3);
  EXPECT_NEAR(wide->geometric_mean, std::exp(0.2), 1e-12);
  EXPECT_NEAR(wide->low, std::exp(0.2 - q * 0.1 / std::sqrt(3.0)), 1e-9);
  EXPECT_NEAR(wide->high, std::exp(0.2 + q * 0.1 / std::sqrt(3.0)), 1e-9);
  EXPECT_LT(wide->low, 1.0);
  EXPECT_NEAR(wide->p_value, 1 - 2 * std::sqrt(3.0) / std::sqrt(14.0), 1e-9);
  EXPECT_FALSE(wide->significant);
  // ln ratios 0.10, 0.11, 0.12: the same test, a tenth of the spread: the interval excludes 1.
  const auto narrow =
      paired_ratio_interval({2, 2, 2}, {2 * std::exp(0.10), 2 * std::exp(0.11), 2 * std::exp(0.12)});
  ASSERT_TRUE(narrow.has_value());
  EXPECT_NEAR(narrow->low, std::exp(0.11 - q * 0.01 / std::sqrt(3.0)), 1e-9);
  EXPECT_GT(narrow->low, 1.0);
  EXPECT_LT(narrow->p_value, 0.05);
  EXPECT_TRUE(narrow->significant);
}

TEST(SpeedupInterval, NoneWithoutTwoPairsAndExactWithoutSpread) {
  EXPECT_FALSE(paired_ratio_interval({1.0}, {1.2}).has_value());
  EXPECT_FALSE(paired_ratio_interval({}, {}).has_value());
  // The same +10 % on every batch: certain, an interval of one point.
  const auto same = paired_ratio_interval({1, 2, 4}, {1.1, 2.2, 4.4});
  ASSERT_TRUE(same.has_value());
  EXPECT_NEAR(same->low, 1.1, 1e-12);
  EXPECT_NEAR(same->high, 1.1, 1e-12);
  EXPECT_TRUE(same->significant);
  // No change at all: exactly 1, not significant.
  const auto none = paired_ratio_interval({1, 2, 4}, {1, 2, 4});
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(none->low, 1.0);
  EXPECT_EQ(none->high, 1.0);
  EXPECT_FALSE(none->significant);
}

const SystemSpec uniform_cp_spec{"uniform-cp", "uniform-cp", nlohmann::json{{"degree", 8}}};

// The sample (zeppelin at 1.000, 1.026, 1.052 s) with uniform-cp fitting at `uniform` seconds per iteration.
RunSummary summary_with(const std::string& name, const std::vector<double>& uniform) {
  test::SampleOptions options;
  options.scenario_name = name;
  options.iterations = static_cast<int>(uniform.size());
  RunResult run = test::sample_run(options);
  run.systems[2] = test::feasible_system(uniform_cp_spec, uniform, 0.3);
  return summarize_run(run);
}

TEST(CombinedTableIntervals, EverySpeedupCarriesThePairedInterval) {
  const RunSummary s = summary_with("a", {1.2, 1.1, 1.3});
  const CombinedRow row = combined_row(s, "a.json", "out/a");
  ASSERT_EQ(row.best_baseline, "uniform-cp");
  ASSERT_TRUE(row.interval_vs_best.has_value());
  // The interval is the paired test's over the iterations: uniform-cp_i / zeppelin_i.
  const SystemSummary& zeppelin = *s.find("zeppelin");
  const auto expected = paired_ratio_interval(zeppelin.samples(metric::iteration_seconds), {1.2, 1.1, 1.3});
  ASSERT_TRUE(expected.has_value());
  EXPECT_EQ(row.interval_vs_best->pairs, 3);
  EXPECT_DOUBLE_EQ(row.interval_vs_best->low, expected->low);
  EXPECT_DOUBLE_EQ(row.interval_vs_best->high, expected->high);
  ASSERT_EQ(row.intervals.size(), row.speedups.size());
  for (std::size_t k = 0; k < row.speedups.size(); ++k) {
    EXPECT_EQ(row.intervals[k].first, row.speedups[k].first);
    EXPECT_EQ(row.intervals[k].second.has_value(), row.speedups[k].second.has_value());
  }
  const CombinedTable t = combine("lib", {row});
  const std::string cell = fmt::format("[{:.3f}, {:.3f}]", expected->low, expected->high);
  EXPECT_NE(combined_text(t).find(cell), std::string::npos) << combined_text(t);
  const nlohmann::ordered_json j = combined_json(t);
  EXPECT_DOUBLE_EQ(j["rows"][0]["speedup_vs_best_interval"]["low"].get<double>(), expected->low);
  EXPECT_EQ(j["rows"][0]["speedup_vs_best_interval"]["pairs"], 3);
  EXPECT_TRUE(j["rows"][0]["speedup_intervals"].contains("ring-cp"));
}

TEST(CombinedTableIntervals, AggregatesCountTheSignificantScenarios) {
  // uniform-cp 30 % slower on every batch: zeppelin significantly faster; 30 % faster: significantly
  // slower; around zeppelin's own times: not significant; one iteration: no interval at all.
  std::vector<CombinedRow> rows;
  rows.push_back(combined_row(summary_with("faster", {1.3, 1.3 * 1.026, 1.3 * 1.052}), "f.json", "out/f"));
  rows.push_back(combined_row(summary_with("slower", {0.7, 0.7 * 1.026, 0.7 * 1.052}), "s.json", "out/s"));
  rows.push_back(combined_row(summary_with("neither", {1.1, 0.95, 1.05}), "n.json", "out/n"));
  rows.push_back(combined_row(summary_with("once", {1.2}), "o.json", "out/o"));
  ASSERT_FALSE(rows[3].interval_vs_best.has_value());
  ASSERT_TRUE(rows[3].speedup_vs_best.has_value());
  const CombinedTable t = combine("lib", rows);
  EXPECT_EQ(t.versus_best.count, 4);
  EXPECT_EQ(t.versus_best.significantly_faster, 1);
  EXPECT_EQ(t.versus_best.significantly_slower, 1);
  EXPECT_EQ(t.versus_best.not_significant, 1);
  EXPECT_EQ(t.versus_best.untested, 1);
  const std::string text = combined_text(t);
  EXPECT_NE(
      text.find("significant (paired t test, p < 0.05): faster in 1, slower in 1, neither in 1, untested "
                "in 1 (fewer than 2 iterations)"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("[n/a]"), std::string::npos) << text;  // the one-iteration row: no invented interval
  const nlohmann::ordered_json j = combined_json(t);
  EXPECT_EQ(j["aggregates"]["versus_best"]["significant"]["faster"], 1);
  EXPECT_EQ(j["aggregates"]["versus_best"]["significant"]["untested"], 1);
  EXPECT_TRUE(j["rows"][3]["speedup_vs_best_interval"].is_null());
}

TEST(CombinedTableIntervals, AnIntervalJustBelowOneDoesNotPrintAsReachingIt) {
  // uniform-cp 0.02 % faster on every batch, give or take 0.005 %: zeppelin is significantly slower by an
  // amount three decimals would print as [1.000, 1.000].
  const std::vector<double> zeppelin{1.0, 1.026, 1.052};
  const std::vector<double> factors{0.9998, 0.99985, 0.99975};
  std::vector<double> uniform;
  for (std::size_t i = 0; i < 3; ++i) uniform.push_back(zeppelin[i] * factors[i]);
  const CombinedRow row = combined_row(summary_with("close", uniform), "c.json", "out/c");
  ASSERT_TRUE(row.interval_vs_best.has_value());
  ASSERT_TRUE(row.interval_vs_best->significant);
  ASSERT_GT(row.interval_vs_best->high, 0.9995);  // rounds to 1.000 in three decimals
  ASSERT_LT(row.interval_vs_best->high, 1.0);
  const std::string text = combined_text(combine("lib", {row}));
  EXPECT_NE(text.find(fmt::format("[{:.6f}, {:.6f}]", row.interval_vs_best->low, row.interval_vs_best->high)),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("1.000]"), std::string::npos) << text;
}

}  // namespace
}  // namespace zb::reports
