// An out-of-memory system is a failure everywhere it can be judged (issue 17, item 1): `compare` calls a
// system that went from fitting to OOM a regression (exit 1), a gate on it fails, the gbench file carries
// error_occurred entries for it, as Google Benchmark writes a failed benchmark, and its aggregates in
// report.json are null rather than 0 s.
#include <algorithm>
#include <cmath>

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

// Every entry of a system with an OOM iteration is an error entry with NaN times (reports/gbench_report.hpp
// says why: compare.py and github-action-benchmark read only the times); no aggregates follow.
TEST(OutOfMemoryGbench, EveryEntryOfAnOomSystemIsAnErrorWithoutATime) {
  test::SampleOptions options;
  options.ring_cp_oom_iterations = 1;  // ring-cp's last iteration of 3
  const nlohmann::ordered_json json =
      gbench_json(summarize_run(test::sample_run(options)), test::fixed_context());
  std::vector<const nlohmann::ordered_json*> ring, uniform;
  for (const auto& entry : json["benchmarks"]) {
    if (entry["run_name"] == "sample/ring-cp/iteration_time") ring.push_back(&entry);
    if (entry["run_name"] == "sample/uniform-cp/iteration_time") uniform.push_back(&entry);
  }
  ASSERT_EQ(ring.size(), 3U);  // no _mean, no _median
  ASSERT_EQ(uniform.size(), 3U);
  for (const auto* entries : {&ring, &uniform}) {
    for (std::size_t i = 0; i < entries->size(); ++i) {
      const nlohmann::ordered_json& entry = *(*entries)[i];
      EXPECT_EQ(entry["name"], entry["run_name"]);
      EXPECT_EQ(entry["run_type"], "iteration");
      EXPECT_EQ(entry["repetitions"], 3);
      EXPECT_EQ(entry["repetition_index"], static_cast<int>(i));
      EXPECT_EQ(entry["error_occurred"], true);
      EXPECT_EQ(entry["error_message"].get<std::string>().rfind(entries == &ring
                                                                    ? "out of memory in 1 of 3 iterations, "
                                                                    : "out of memory in 3 of 3 iterations, ",
                                                                0),
                0U)
          << entry["error_message"];
      EXPECT_TRUE(std::isnan(entry["real_time"].get<double>()));
      EXPECT_TRUE(std::isnan(entry["cpu_time"].get<double>()));
      EXPECT_EQ(entry["time_unit"], "ms");
      EXPECT_FALSE(entry.contains("tokens_per_second"));  // no counters on a failed run
    }
  }
  // Which iterations fitted: the message and `iterations` (1 when it ran, as Google Benchmark counts them).
  EXPECT_EQ((*ring[0])["error_message"], "out of memory in 1 of 3 iterations, not this one (1500 ms)");
  EXPECT_EQ((*ring[1])["iterations"], 1);
  EXPECT_EQ((*ring[2])["error_message"],
            "out of memory in 1 of 3 iterations, this one: " + (plan::OomReport{5, 0, 30000, 23393}).str());
  EXPECT_EQ((*ring[2])["iterations"], 0);
  EXPECT_EQ((*uniform[1])["iterations"], 0);
  // Google Benchmark's key order: error fields after threads, before iterations and times.
  std::vector<std::string> keys;
  for (const auto& item : uniform[0]->items()) keys.push_back(item.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"name", "family_index", "per_family_instance_index", "run_name",
                                            "run_type", "repetitions", "repetition_index", "threads",
                                            "error_occurred", "error_message", "iterations", "real_time",
                                            "cpu_time", "time_unit"}));
  // Written as Google Benchmark writes NaN, never null (compare.py cannot compute with null).
  const std::string text = gbench_text(json);
  EXPECT_NE(text.find("\"real_time\": NaN,"), std::string::npos);
  EXPECT_EQ(text.find("null"), std::string::npos);
}

}  // namespace
}  // namespace zb::reports
