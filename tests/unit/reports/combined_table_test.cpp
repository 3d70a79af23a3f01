// The combined table of `run` over several scenarios (issue 14, item 4): each row repeats its run's
// summary (subject, best baseline, speed-ups), the aggregates are the stated formulas over the rows that
// have the figure, a loss and an OOM are shown as such, and every output escapes scenario strings.
#include <gtest/gtest.h>

#include <cmath>

#include "reports/combined_table.hpp"
#include "reports/summary.hpp"
#include "tests/unit/reports/sample_run.hpp"

namespace zb::reports {
namespace {

const SystemSpec uniform_cp_spec{"uniform-cp", "uniform-cp", nlohmann::json{{"degree", 8}}};

// The sample run (zeppelin, ring-cp, uniform-cp) with uniform-cp fitting at `uniform_seconds` per
// iteration, so that the best baseline and zeppelin's speed-up against it are set by the test.
RunSummary summary_with(const std::string& name, double uniform_seconds) {
  test::SampleOptions options;
  options.scenario_name = name;
  RunResult run = test::sample_run(options);
  run.systems[2] =
      test::feasible_system(uniform_cp_spec, {uniform_seconds, uniform_seconds, uniform_seconds}, 0.3);
  return summarize_run(run);
}

TEST(CombinedTable, RowRepeatsTheRunsSummary) {
  const RunSummary s = summary_with("a", 1.0);
  const CombinedRow row = combined_row(s, "a.json", "out/a");
  EXPECT_EQ(row.scenario, s.scenario);
  EXPECT_EQ(row.subject, "zeppelin");
  ASSERT_TRUE(row.subject_seconds && s.find("zeppelin"));
  EXPECT_DOUBLE_EQ(*row.subject_seconds, s.find("zeppelin")->aggregates(metric::iteration_seconds).mean);
  EXPECT_EQ(row.best_baseline, s.best_baseline);
  EXPECT_EQ(row.speedup_vs_best, s.find("zeppelin")->speedup_vs_best);
  ASSERT_EQ(row.speedups.size(), s.baseline_ranking.size());
  for (std::size_t i = 0; i < row.speedups.size(); ++i) {
    EXPECT_EQ(row.speedups[i].first, s.baseline_ranking[i]);
    EXPECT_EQ(row.speedups[i].second, s.speedup("zeppelin", s.baseline_ranking[i]));
  }
  EXPECT_EQ(row.simulated, s.simulated);
  EXPECT_EQ(row.hardware_profile, s.hardware_profile);
}

TEST(CombinedTable, AggregatesAreTheFormulasOverRowsWithTheFigure) {
  // uniform-cp at 1 s, 10 s and 100 s gives three different speed-ups; a failed scenario has none.
  std::vector<CombinedRow> rows;
  std::vector<double> ratios;
  for (const auto& [name, seconds] :
       std::vector<std::pair<std::string, double>>{{"slow", 0.01}, {"mid", 1.0}, {"fast", 3.0}}) {
    rows.push_back(combined_row(summary_with(name, seconds), name + ".json", "out/" + name));
    ASSERT_TRUE(rows.back().speedup_vs_best.has_value());
    ratios.push_back(*rows.back().speedup_vs_best);
  }
  rows.push_back(failed_row("broken", "broken.json", "rank 3 is stuck"));
  const CombinedTable t = combine("library", rows);
  ASSERT_EQ(t.versus_best.count, 3);
  const double mean = (ratios[0] + ratios[1] + ratios[2]) / 3;
  const double geometric = std::cbrt(ratios[0] * ratios[1] * ratios[2]);
  EXPECT_NEAR(t.versus_best.mean, mean, 1e-12);
  EXPECT_NEAR(t.versus_best.geometric_mean, geometric, 1e-12);
  std::vector<double> sorted = ratios;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_DOUBLE_EQ(t.versus_best.median, sorted[1]);
  EXPECT_DOUBLE_EQ(t.versus_best.min, sorted[0]);
  EXPECT_DOUBLE_EQ(t.versus_best.max, sorted[2]);
  EXPECT_EQ(t.wins + t.ties + t.losses, 3);
  // The baseline columns are every baseline of any row, once each.
  EXPECT_EQ(t.baseline_columns.size(), rows[0].speedups.size());
}

TEST(CombinedTable, LossesAndOutOfMemoryAreShownPlainly) {
  CombinedRow loses = combined_row(summary_with("loses", 0.01), "l.json", "out/l");
  ASSERT_TRUE(loses.speedup_vs_best && *loses.speedup_vs_best < 1);
  EXPECT_EQ(verdict_of(loses), "loses");
  CombinedRow tie = loses;
  tie.speedup_vs_best = 1.004;
  EXPECT_EQ(verdict_of(tie), "ties");
  CombinedRow oom = loses;
  oom.subject_seconds.reset();
  oom.speedup_vs_best.reset();
  EXPECT_EQ(verdict_of(oom), "n/a");
  const CombinedTable t = combine("t", {loses, oom});
  EXPECT_EQ(t.losses, 1);
  EXPECT_EQ(t.versus_best.count, 1);  // the OOM row has no figure to average
  const std::string text = combined_text(t);
  EXPECT_NE(text.find("loses"), std::string::npos) << text;
  EXPECT_NE(text.find("OOM"), std::string::npos) << text;
  EXPECT_NE(text.find("loses 1"), std::string::npos) << text;
  const nlohmann::ordered_json j = combined_json(t);
  EXPECT_TRUE(j["rows"][1]["speedup_vs_best"].is_null());
  EXPECT_EQ(j["rows"][0]["verdict"], "loses");
}

TEST(CombinedTable, EveryOutputEscapesScenarioStrings) {
  CombinedRow row = combined_row(summary_with("a", 1.0), "a.json", "out/a");
  row.scenario = "<script>x</script>|pipe";
  const CombinedTable t = combine("<lib>", {row, failed_row("f", "f.json", "disk <full>")});
  const std::string html = combined_html(t);
  EXPECT_EQ(html.find("<script>x"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;"), std::string::npos);
  EXPECT_EQ(html.find("disk <full>"), std::string::npos);
  const std::string md = combined_markdown(t);
  EXPECT_NE(md.find("\\|pipe"), std::string::npos) << md;  // a '|' would end the Markdown cell
  EXPECT_EQ(combined_json(t)["rows"][1]["error"], "disk <full>");
}

}  // namespace
}  // namespace zb::reports
