// An out-of-memory system is a failure everywhere it can be judged (issue 17, item 1): `compare` calls a
// system that went from fitting to OOM a regression (exit 1), a gate on it fails, the gbench file carries
// an error_occurred entry for it, as Google Benchmark writes a failed benchmark, and its aggregates in
// report.json are null rather than 0 s.
#include <algorithm>

#include <gtest/gtest.h>

#include "reports/compare.hpp"
#include "reports/gbench_report.hpp"
#include "reports/json_report.hpp"
#include "tests/unit/reports/sample_run.hpp"

namespace zb::reports {
namespace {

nlohmann::json report_with(int iterations, int ring_cp_oom_iterations) {
  test::SampleOptions options;
  options.iterations = iterations;
  options.ring_cp_oom_iterations = ring_cp_oom_iterations;
  return test::sample_report_json(options);
}

const FeasibilityComparison& memory_row(const ComparisonReport& report, const std::string& system) {
  for (const FeasibilityComparison& row : report.feasibility) {
    if (row.system == system) return row;
  }
  throw std::runtime_error("no memory row for " + system);
}

TEST(OutOfMemoryCompare, GoingFromFittingToOomIsARegression) {
  const ComparisonReport result = compare_reports(report_with(3, 0), report_with(3, 3), {});
  const FeasibilityComparison& ring = memory_row(result, "ring-cp");
  EXPECT_EQ(ring.base_oom_iterations, 0);
  EXPECT_EQ(ring.candidate_oom_iterations, 3);
  EXPECT_EQ(ring.verdict, Verdict::regression);
  EXPECT_EQ(exit_code_of(result), ExitCode::check_failed);
  EXPECT_NE(format_comparison_text(result).find("result: 1 regression (exit 1)"), std::string::npos);
  EXPECT_EQ(comparison_to_json(result)["memory"][1]["verdict"], "REGRESSION");
}

TEST(OutOfMemoryCompare, OneOomIterationOutOfEightIsARegression) {
  const ComparisonReport result = compare_reports(report_with(8, 0), report_with(8, 1), {});
  EXPECT_EQ(memory_row(result, "ring-cp").verdict, Verdict::regression);
  EXPECT_EQ(exit_code_of(result), ExitCode::check_failed);
}

TEST(OutOfMemoryCompare, FittingAgainIsAnImprovementAndAlwaysOomIsUnchanged) {
  const ComparisonReport result = compare_reports(report_with(3, 2), report_with(3, 0), {});
  EXPECT_EQ(memory_row(result, "ring-cp").verdict, Verdict::improvement);
  // uniform-cp runs out of memory on both sides: no news, and its metric rows have nothing to test.
  EXPECT_EQ(memory_row(result, "uniform-cp").verdict, Verdict::unchanged);
  EXPECT_EQ(exit_code_of(result), ExitCode::ok);
}

TEST(OutOfMemoryCompare, SharesAreComparedWhenIterationCountsDiffer) {
  // 1 of 4 against 2 of 8: the same share, not a regression.
  const ComparisonReport result = compare_reports(report_with(4, 1), report_with(8, 2), {});
  EXPECT_EQ(memory_row(result, "ring-cp").verdict, Verdict::unchanged);
}

TEST(OutOfMemoryGate, AGateOnASystemWithAnOomIterationFails) {
  test::SampleOptions options;
  options.ring_cp_oom_iterations = 1;  // ring-cp fits 2 of 3 iterations
  const RunSummary summary = summarize_run(test::sample_run(options));
  ASSERT_EQ(summary.gates.size(), 2U);
  // speedup zeppelin vs ring-cp ≥ 1.2 passes on the full run (1.5x), fails with a ring-cp OOM iteration.
  EXPECT_FALSE(summary.gates[0].passed);
  EXPECT_EQ(summary.gates[0].reason, "ring-cp ran out of memory in 1 of 3 iterations");
  EXPECT_FALSE(summary.gates[1].passed);
  EXPECT_EQ(summary.gates[1].reason, "ring-cp ran out of memory in 1 of 3 iterations");
  EXPECT_FALSE(summary.gates_passed());
  // And no speed-up is claimed against a mean over other iterations than the system's.
  EXPECT_FALSE(summary.speedup("zeppelin", "ring-cp").has_value());
}

TEST(OutOfMemoryGate, TheSameGatePassesWhenEveryIterationFits) {
  const RunSummary summary = summarize_run(test::sample_run());
  EXPECT_TRUE(summary.gates[0].passed) << summary.gates[0].reason;
}

TEST(OutOfMemoryReport, AggregatesOfASystemThatNeverFittedAreNull) {
  const nlohmann::json report = report_with(3, 0);
  const nlohmann::json& uniform = report["systems"][2];
  ASSERT_EQ(uniform["label"], "uniform-cp");
  for (const char* metric :
       {"iteration_seconds", "tokens_per_second", "model_tflops_per_gpu", "mfu", "prediction_ratio"}) {
    const nlohmann::json& aggregate = uniform["aggregates"][metric];
    EXPECT_EQ(aggregate["count"], 0) << metric;
    for (const char* figure : {"mean", "sd", "min", "max", "median"}) {
      EXPECT_TRUE(aggregate[figure].is_null()) << metric << "." << figure << " = " << aggregate[figure];
    }
  }
  EXPECT_TRUE(uniform["breakdown"].is_null());
  EXPECT_TRUE(uniform["balance"]["attention_imbalance"]["mean"].is_null());
  EXPECT_TRUE(uniform["nic"]["utilization_mean"]["mean"].is_null());
  // The planner ran every iteration, so its time is a figure even for an OOM system.
  EXPECT_TRUE(uniform["aggregates"]["planner_seconds"]["mean"].is_number());
}

TEST(OutOfMemoryGbench, AnOomSystemIsAnErrorEntryAsGoogleBenchmarkWritesIt) {
  test::SampleOptions options;
  options.ring_cp_oom_iterations = 1;
  const nlohmann::ordered_json json =
      gbench_json(summarize_run(test::sample_run(options)), test::fixed_context());
  std::vector<const nlohmann::ordered_json*> errors;
  for (const auto& entry : json["benchmarks"]) {
    if (entry.contains("error_occurred")) errors.push_back(&entry);
  }
  ASSERT_EQ(errors.size(), 2U);  // ring-cp (1 of 3 OOM) and uniform-cp (3 of 3)
  const nlohmann::ordered_json& ring = *errors[0];
  EXPECT_EQ(ring["name"], "sample/ring-cp/iteration_time");
  EXPECT_EQ(ring["run_type"], "iteration");
  EXPECT_EQ(ring["error_occurred"], true);
  EXPECT_EQ(ring["error_message"].get<std::string>().rfind("out of memory in 1 of 3 iterations", 0), 0U)
      << ring["error_message"];
  EXPECT_EQ(ring["iterations"], 2);  // the iterations that fitted, whose mean real_time is
  EXPECT_NEAR(ring["real_time"].get<double>(), 1e3 * (1.50 + 1.551) / 2, 1e-9);
  const nlohmann::ordered_json& uniform = *errors[1];
  EXPECT_EQ(uniform["name"], "sample/uniform-cp/iteration_time");
  EXPECT_EQ(uniform["iterations"], 0);
  EXPECT_EQ(uniform["real_time"], 0.0);
  // Google Benchmark's key order: error fields after threads, before iterations and times.
  std::vector<std::string> keys;
  for (const auto& item : uniform.items()) keys.push_back(item.key());
  const auto at = [&](const char* key) { return std::find(keys.begin(), keys.end(), key) - keys.begin(); };
  EXPECT_LT(at("threads"), at("error_occurred"));
  EXPECT_LT(at("error_message"), at("iterations"));
  // No aggregates follow a failed benchmark.
  for (const auto& entry : json["benchmarks"]) {
    EXPECT_NE(entry["name"], "sample/uniform-cp/iteration_time_mean");
    EXPECT_NE(entry["name"], "sample/ring-cp/iteration_time_mean");
  }
}

}  // namespace
}  // namespace zb::reports
