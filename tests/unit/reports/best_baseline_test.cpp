// Reports lead with the strongest baseline (issue 12, item 5): which baseline is the best one, the
// speed-ups against it, the order of the speed-up columns, the sentence that says a system is slower,
// and the JSON fields that carry all of it.
#include <gtest/gtest.h>

#include "reports/best_baseline.hpp"
#include "reports/console.hpp"
#include "reports/html_report.hpp"
#include "reports/json_report.hpp"
#include "reports/number_format.hpp"
#include "reports/resolved_options.hpp"
#include "tests/unit/reports/sample_run.hpp"

namespace zb::reports {
namespace {

const SystemSpec uniform_cp_spec{"uniform-cp", "uniform-cp", nlohmann::json{{"degree", 8}}};

double mean(const std::vector<double>& values) {
  double sum = 0;
  for (const double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

// The sample run with its OOM uniform-cp replaced by one that fits, taking `times` per iteration.
RunResult with_uniform_cp(const std::vector<double>& times) {
  RunResult run = test::sample_run();
  run.systems[2] = test::feasible_system(uniform_cp_spec, times, 0.3);
  return run;
}

std::vector<double> times_of(const RunResult& run, std::size_t system) {
  std::vector<double> out;
  for (const IterationResult& it : run.systems[system].iterations)
    out.push_back(it.metrics.iteration_seconds);
  return out;
}

// The first line of the console table (its header).
std::string table_header(const std::string& console) {
  const std::size_t start = console.find("system ");
  return console.substr(start, console.find('\n', start) - start);
}

TEST(BestBaseline, IsTheFastestBaselineThatFitsEveryIteration) {
  const RunResult run = with_uniform_cp({1.2, 1.3, 1.25});
  const RunSummary summary = summarize_run(run);
  ASSERT_TRUE(summary.best_baseline.has_value());
  EXPECT_EQ(*summary.best_baseline, "uniform-cp");
  EXPECT_EQ(summary.baseline_ranking, (std::vector<std::string>{"uniform-cp", "ring-cp"}));
  const double best_mean = 1.25;
  ASSERT_TRUE(summary.systems[0].speedup_vs_best.has_value());
  EXPECT_NEAR(*summary.systems[0].speedup_vs_best, best_mean / mean(times_of(run, 0)), 1e-12);
  EXPECT_NEAR(*summary.systems[1].speedup_vs_best, best_mean / mean(times_of(run, 1)), 1e-12);  // < 1: weaker
  EXPECT_EQ(*summary.systems[2].speedup_vs_best, 1.0);  // the best baseline against itself
  // The speed-up list follows the ranking: zeppelin vs uniform-cp before zeppelin vs ring-cp.
  ASSERT_GE(summary.speedups.size(), 2U);
  EXPECT_EQ(summary.speedups[0].baseline, "uniform-cp");
  EXPECT_EQ(summary.speedups[1].baseline, "ring-cp");
}

TEST(BestBaseline, SkipsAFasterBaselineThatRanOutOfMemoryInOneIteration) {
  RunResult run = with_uniform_cp({0.8, 0.8, 0.8});
  IterationResult& last = run.systems[2].iterations.back();
  last.feasible = false;
  last.oom = {plan::OomReport{2, 0, 30000, 23393}};
  const RunSummary summary = summarize_run(run);
  EXPECT_EQ(summary.best_baseline, "ring-cp");
  EXPECT_EQ(summary.baseline_ranking, (std::vector<std::string>{"ring-cp", "uniform-cp"}));
  EXPECT_FALSE(summary.systems[2].speedup_vs_best.has_value());
  EXPECT_NE(
      best_baseline_statement(summary).find("not eligible: uniform-cp (out of memory in 1 of 3 iterations)"),
      std::string::npos)
      << best_baseline_statement(summary);
}

TEST(BestBaseline, ABaselineWithNoFeasibleIterationIsNeverBest) {
  const RunSummary summary = summarize_run(test::sample_run());  // uniform-cp: OOM in every iteration
  EXPECT_EQ(summary.best_baseline, "ring-cp");
  EXPECT_EQ(summary.baseline_ranking, (std::vector<std::string>{"ring-cp", "uniform-cp"}));
}

TEST(BestBaseline, NoneWhenNoBaselineFits) {
  RunResult run = test::sample_run();
  run.systems[1] = test::oom_system(run.scenario.systems[1], 3);
  const RunSummary summary = summarize_run(run);
  EXPECT_FALSE(summary.best_baseline.has_value());
  EXPECT_FALSE(summary.systems[0].speedup_vs_best.has_value());
  const std::string console = console_summary(summary, ConsoleLayout::full());
  EXPECT_EQ(console.find("vs best"), std::string::npos) << console;
  EXPECT_NE(table_header(console).find("vs ring-cp"), std::string::npos);
  EXPECT_NE(
      console.find(
          "no best baseline, since no baseline fitted in memory in every iteration: ring-cp (out of memory "
          "in 3 of 3 iterations), uniform-cp (out of memory in 3 of 3 iterations)\n"),
      std::string::npos)
      << console;
  EXPECT_NE(console.find("zeppelin: no speed-up against a best baseline"), std::string::npos);
  const nlohmann::ordered_json report = report_json(run, summary, test::fixed_context());
  EXPECT_TRUE(report["best_baseline"].is_null());
  EXPECT_TRUE(report["systems"][0]["speedup_vs_best_baseline"].is_null());
}

TEST(BestBaseline, ARunWithoutBaselinesHasNoSpeedupColumns) {
  RunResult run = test::sample_run();
  run.systems.resize(1);
  run.scenario.systems.resize(1);
  run.scenario.gates.clear();
  const RunSummary summary = summarize_run(run);
  EXPECT_TRUE(summary.baseline_ranking.empty());
  EXPECT_FALSE(summary.best_baseline.has_value());
  const std::string console = console_summary(summary, ConsoleLayout::full());
  EXPECT_EQ(table_header(console).find("vs "), std::string::npos) << console;
  EXPECT_EQ(console.find("best baseline"), std::string::npos) << console;
  EXPECT_NE(console.find("zeppelin: routing true"), std::string::npos) << console;
  const nlohmann::ordered_json report = report_json(run, summary, test::fixed_context());
  EXPECT_TRUE(report["best_baseline"].is_null());
  EXPECT_TRUE(report["baseline_ranking"].empty());
  EXPECT_NE(html_report(run, summary, test::fixed_context()).find("</html>"), std::string::npos);
}

TEST(BestBaseline, EqualMeansKeepScenarioOrder) {
  RunResult run = test::sample_run();
  run.systems[2] = test::feasible_system(uniform_cp_spec, times_of(run, 1), 0.3);  // ring-cp's exact times
  const RunSummary summary = summarize_run(run);
  EXPECT_EQ(summary.best_baseline, "ring-cp");
  EXPECT_EQ(summary.baseline_ranking, (std::vector<std::string>{"ring-cp", "uniform-cp"}));
}

TEST(BestBaselineConsole, FirstSpeedupColumnIsTheBestThenStrongestFirst) {
  const std::string header =
      table_header(console_summary(summarize_run(with_uniform_cp({1.2, 1.3, 1.25})), ConsoleLayout::full()));
  const std::size_t best = header.find("vs best (uniform-cp)");
  const std::size_t uniform = header.find("vs uniform-cp");
  const std::size_t ring = header.find("vs ring-cp");
  ASSERT_NE(best, std::string::npos) << header;
  EXPECT_LT(header.find("MFU"), best);
  EXPECT_LT(best, uniform);
  EXPECT_LT(uniform, ring);
}

TEST(BestBaselineConsole, SaysPlainlyWhenZeppelinIsSlower) {
  const RunResult run = with_uniform_cp({0.9, 0.92, 0.94});
  const RunSummary summary = summarize_run(run);
  ASSERT_TRUE(summary.systems[0].speedup_vs_best.has_value());
  const double ratio = *summary.systems[0].speedup_vs_best;
  EXPECT_NEAR(ratio, 0.92 / mean(times_of(run, 0)), 1e-12);
  ASSERT_LT(ratio, 1.0);
  // The sample's zeppelin ran its own partition twice and hybrid-dp's layout once: the sentence says so.
  const std::string sentence =
      "zeppelin is slower than the best baseline uniform-cp: " + format_ratio(ratio) +
      " (layouts: hierarchical 2, hybrid-dp 1)";
  EXPECT_NE(console_summary(summary, ConsoleLayout::full()).find(sentence + "\n"), std::string::npos)
      << console_summary(summary, ConsoleLayout::full());
  // The HTML headline says the same, set as a loss.
  EXPECT_NE(
      html_report(run, summary, test::fixed_context()).find(R"(<p class="versus lost">)" + sentence + "</p>"),
      std::string::npos);
}

TEST(BestBaselineConsole, SaysFasterAndNamesTheBaseline) {
  const RunSummary summary = summarize_run(test::sample_run());
  const std::string console = console_summary(summary, ConsoleLayout::full());
  const std::string sentence = "zeppelin is faster than the best baseline ring-cp: " +
                               format_ratio(*summary.systems[0].speedup_vs_best);
  EXPECT_NE(console.find(sentence), std::string::npos) << console;
  EXPECT_NE(
      console.find(
          "best baseline: ring-cp (mean iteration time 1.52 s), the fastest baseline that fitted in every "
          "iteration; not eligible: uniform-cp (out of memory in 3 of 3 iterations)"),
      std::string::npos)
      << console;
}

TEST(BestBaselineConsole, ALossTooSmallForTwoDecimalsStillShowsBelowOne) {
  RunResult run = test::sample_run();
  std::vector<double> times = times_of(run, 0);
  for (double& t : times) t *= 1.002;
  run.systems[2] = test::feasible_system(uniform_cp_spec, times_of(run, 0), 0.3);
  run.systems[0] = test::feasible_system(run.scenario.systems[0], times, 0.05);
  const std::string console = console_summary(summarize_run(run), ConsoleLayout::full());
  EXPECT_NE(console.find("zeppelin is slower than the best baseline uniform-cp: 0.998004\u00d7"),
            std::string::npos)
      << console;
}

TEST(ResolvedOptions, ShowAutoChoicesAndFactsPerSystem) {
  const RunSummary summary = summarize_run(test::sample_run());
  // ring-cp asked for "degree": "auto" (its default) and planned degree 8; its pack count differed.
  EXPECT_EQ(summary.systems[1].resolved_options_text,
            "degree 8 (auto), dealing balanced, groups 1, packs 2 or 3");
  // The sample's zeppelin has no options given: its plan's facts, options in catalog order, the
  // structured thresholds left out.
  EXPECT_EQ(summary.systems[0].resolved_options_text,
            "routing true, remap true, partitioning hierarchical, layout hierarchical or hybrid-dp");
  // An OOM plan records no facts: uniform-cp shows what was asked.
  EXPECT_EQ(summary.systems[2].resolved_options_text, "degree 8");
  const std::string console = console_summary(summary, ConsoleLayout::full());
  EXPECT_NE(console.find("  ring-cp: degree 8 (auto), dealing balanced, groups 1, packs 2 or 3\n"),
            std::string::npos)
      << console;
}

TEST(ResolvedOptions, AChoiceFactThatRepeatsTheRequestIsFolded) {
  const SystemSpec spec{"uniform-cp", "uniform-cp",
                        nlohmann::json{{"degree", "auto"}, {"dealing", "balanced"}}};
  const nlohmann::json info{{"degree", 4}, {"degree_choice", "auto"}, {"groups", 4}};
  const nlohmann::ordered_json resolved = iteration_resolved_options(spec, info);
  EXPECT_EQ(resolved.dump(), R"({"degree":4,"dealing":"balanced","degree_choice":"auto","groups":4})");
  EXPECT_EQ(resolved_options_text(spec, resolved), "degree 4 (auto), dealing balanced, groups 4");
}

TEST(ResolvedOptions, AFactSomeIterationsLackIsNotShownAsHoldingForAll) {
  RunResult run = test::sample_run();
  const nlohmann::json own{{"chosen", "own"}};
  const nlohmann::json packed{{"chosen", "packed-cp"}, {"degree", 2}};
  run.systems[0] = test::feasible_system(run.scenario.systems[0], times_of(run, 0), 0.05, {own, packed});
  const RunSummary summary = summarize_run(run);
  EXPECT_EQ(summary.systems[0].resolved_options.dump(),
            R"({"chosen":["own","packed-cp"],"degree":[null,2]})");
  EXPECT_EQ(summary.systems[0].resolved_options_text, "chosen own or packed-cp, degree none or 2");
}

TEST(BestBaselineJson, CarriesTheBestBaselineSpeedupsAndResolvedOptions) {
  const RunResult run = with_uniform_cp({1.2, 1.3, 1.25});
  const RunSummary summary = summarize_run(run);
  const nlohmann::ordered_json report = report_json(run, summary, test::fixed_context());
  EXPECT_EQ(report["best_baseline"]["label"], "uniform-cp");
  EXPECT_EQ(report["best_baseline"]["strategy"], "uniform-cp");
  EXPECT_NEAR(report["best_baseline"]["iteration_seconds"].get<double>(), 1.25, 1e-12);
  EXPECT_EQ(report["baseline_ranking"], (nlohmann::ordered_json{"uniform-cp", "ring-cp"}));
  EXPECT_NEAR(report["systems"][0]["speedup_vs_best_baseline"].get<double>(),
              *summary.systems[0].speedup_vs_best, 1e-15);
  EXPECT_EQ(report["systems"][2]["speedup_vs_best_baseline"].get<double>(), 1.0);
  // Per system: one value where the iterations agree, the distinct values where they differ; per
  // iteration: that iteration's own.
  const auto& ring = report["systems"][1];
  EXPECT_EQ(ring["resolved_options"]["degree"], 8);
  EXPECT_EQ(ring["resolved_options"]["packs"], (nlohmann::ordered_json{2, 3}));
  EXPECT_EQ(ring["per_iteration"][1]["resolved_options"]["packs"], 3);
  EXPECT_FALSE(report["systems"][0]["resolved_options"].contains("thresholds"));
  // Every earlier speed-up entry is still there, strongest baseline first.
  ASSERT_EQ(report["comparisons"].size(), 4U);
  EXPECT_EQ(report["comparisons"][0]["baseline"], "uniform-cp");
  EXPECT_EQ(report["comparisons"][1]["baseline"], "ring-cp");
}

TEST(BestBaselineGate, BestNamesTheBestBaseline) {
  RunResult run = with_uniform_cp({1.2, 1.3, 1.25});
  run.scenario.gates = {GateSpec{"speedup", "zeppelin", "best", 1.2, std::nullopt}};
  const RunSummary summary = summarize_run(run);
  const GateResult& gate = summary.gates.at(0);
  EXPECT_EQ(gate.baseline, "uniform-cp");
  ASSERT_TRUE(gate.observed.has_value());
  EXPECT_EQ(*gate.observed, *summary.systems[0].speedup_vs_best);
  EXPECT_TRUE(gate.passed) << gate.reason;
  EXPECT_EQ(gate.description, "speedup of zeppelin vs the best baseline (uniform-cp) \u2265 1.2");
  EXPECT_EQ(report_json(run, summary, test::fixed_context())["gates"][0]["resolved_baseline"], "uniform-cp");
}

TEST(BestBaselineGate, FailsWhenNoBaselineFits) {
  RunResult run = test::sample_run();
  run.systems[1] = test::oom_system(run.scenario.systems[1], 3);
  run.scenario.gates = {GateSpec{"speedup", "zeppelin", "best", 1.0, std::nullopt}};
  const GateResult gate = summarize_run(run).gates.at(0);
  EXPECT_FALSE(gate.passed);
  EXPECT_FALSE(gate.observed.has_value());
  EXPECT_EQ(gate.reason, "there is no best baseline: no baseline fitted in memory in every iteration");
  EXPECT_EQ(gate.description, "speedup of zeppelin vs the best baseline (none) \u2265 1");
}

}  // namespace
}  // namespace zb::reports
