// The console summary and the gate evaluation it prints.
#include <gtest/gtest.h>

#include "core/common/error.hpp"
#include "reports/console.hpp"
#include "reports/number_format.hpp"
#include "reports/report_files.hpp"
#include "tests/unit/reports/sample_run.hpp"

namespace zb::reports {
namespace {

TEST(Summary, SpeedupsAndGates) {
  const RunSummary summary = summarize_run(test::sample_run());
  ASSERT_EQ(summary.systems.size(), 3U);
  EXPECT_FALSE(summary.systems[0].is_baseline);
  EXPECT_TRUE(summary.systems[1].is_baseline);
  EXPECT_FALSE(summary.systems[2].feasible());
  const double expected = ((1.50 + 1.551 + 1.517) / 3) / ((1.0 + 1.026 + 1.052) / 3);
  ASSERT_TRUE(summary.speedup("zeppelin", "ring-cp").has_value());
  EXPECT_NEAR(*summary.speedup("zeppelin", "ring-cp"), expected, 1e-12);
  EXPECT_FALSE(summary.speedup("zeppelin", "uniform-cp").has_value());  // OOM baseline: no figure
  ASSERT_EQ(summary.gates.size(), 2U);
  EXPECT_TRUE(summary.gates[0].passed);
  EXPECT_FALSE(summary.gates[1].passed);
  EXPECT_NE(summary.gates[1].reason.find("below the minimum 0.9"), std::string::npos);
  EXPECT_FALSE(summary.gates_passed());
}

TEST(Summary, GateOnAnOomSystemFails) {
  RunResult run = test::sample_run();
  run.scenario.gates = {GateSpec{"iteration_seconds", "uniform-cp", "", std::nullopt, 10.0}};
  const RunSummary summary = summarize_run(run);
  EXPECT_FALSE(summary.gates[0].passed);
  EXPECT_FALSE(summary.gates[0].observed.has_value());
}

TEST(Summary, NvlinkFiguresAreMeansOverTheIterationsThatRecordedThem) {
  RunResult run = test::sample_run();
  // The sample's GPUs send 4 × 2 GB + 4 × 4 GB per iteration; drop the figures of zeppelin's second
  // iteration, as a backend without NVLink loads would, and the mean covers the other two.
  run.systems[0].iterations[1].metrics.nvlinks.clear();
  const RunSummary summary = summarize_run(run);
  const SystemSummary& zeppelin = summary.systems[0];
  EXPECT_EQ(zeppelin.aggregates(metric::nvlink_bytes).count, 2);
  EXPECT_DOUBLE_EQ(zeppelin.aggregates(metric::nvlink_bytes).mean, 24e9);
  ASSERT_EQ(zeppelin.nvlinks.size(), 8U);
  EXPECT_DOUBLE_EQ(zeppelin.nvlinks[1].tx_bytes, 4e9);
  const double first = run.systems[0].iterations[0].metrics.nvlink_utilization_max;
  const double third = run.systems[0].iterations[2].metrics.nvlink_utilization_max;
  EXPECT_DOUBLE_EQ(zeppelin.aggregates(metric::nvlink_utilization_max).mean, (first + third) / 2);
  EXPECT_EQ(summary.systems[2].aggregates(metric::nvlink_utilization_mean).count,
            0);  // out of memory every time: no figure
}

TEST(Console, StatesBackendRowsAndGates) {
  const std::string text = console_summary(summarize_run(test::sample_run()), ConsoleLayout::full());
  EXPECT_NE(text.find("backend: sim (simulated by SimGrid 3.32 flow model; compute from the cost model) "
                      "\u2014 figures are "
                      "SIMULATED, not measured"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("vs ring-cp"), std::string::npos);
  EXPECT_NE(text.find("OOM (3 of 3 iterations)"), std::string::npos);
  EXPECT_NE(text.find("PASS  speedup of zeppelin vs ring-cp \u2265 1.2"), std::string::npos);
  EXPECT_NE(text.find("FAIL  mfu of ring-cp \u2265 0.9"), std::string::npos);
  EXPECT_NE(text.find("1 of 2 gates FAILED (exit 1)"), std::string::npos);
  EXPECT_NE(text.find("NVLink util mean/max"), std::string::npos);
}

TEST(NumberFormat, UnitsAndSigns) {
  EXPECT_EQ(format_seconds(1.234), "1.23 s");
  EXPECT_EQ(format_seconds(0.0456), "45.6 ms");
  EXPECT_EQ(format_seconds(0.000789), "789 \u00b5s");
  EXPECT_EQ(format_si(851234), "851 k");
  EXPECT_EQ(format_si(999999), "1.00 M");
  EXPECT_EQ(format_percent(0.4123), "41.2 %");
  // A planner's share of an iteration: two significant digits below 10 %, not "0.0 %".
  EXPECT_EQ(format_share(0.000108), "0.011 %");
  EXPECT_EQ(format_share(0.0193), "1.9 %");
  EXPECT_EQ(format_share(0.02), "2 %");
  EXPECT_EQ(format_share(0.435), "44 %");
  EXPECT_EQ(format_share(3.2), "320 %");
  EXPECT_EQ(format_change(0.2), "+20.0 %");
  EXPECT_EQ(format_change(-0.031), "\u22123.1 %");
  EXPECT_EQ(format_ratio(1.844), "1.84\u00d7");
}

TEST(ReportFiles, WritesEveryFormatIntoANewFolder) {
  const std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "zb_report_files" / "out";
  std::filesystem::remove_all(dir.parent_path());
  const RunResult run = test::sample_run();
  const auto written =
      write_reports(run, summarize_run(run), test::fixed_context(), dir, {"json", "html", "trace", "gbench"});
  for (const char* name :
       {"report.json", "report.html", "trace-zeppelin.json", "trace-ring-cp.json", "gbench.json"}) {
    EXPECT_TRUE(std::filesystem::exists(dir / name)) << name;
  }
  EXPECT_EQ(written.size(), 5U);
  EXPECT_THROW((void)write_reports(run, summarize_run(run), test::fixed_context(), dir, {"pdf"}), Error);
  EXPECT_EQ(file_name_safe("a/b c"), "a_b_c");
  EXPECT_EQ(file_name_safe(".hidden"), "_.hidden");
}

}  // namespace
}  // namespace zb::reports
