// Every report says which layout each iteration's plan ran (issue 31, item 1): plan::Plan::info["layout"]
// counted per system over the iterations that ran, per iteration in report.json and report.html, in the
// console's sentence against the best baseline, the gbench label and the combined table; systems whose
// plans record no layout show none, and the console's table keeps its width.
#include <gtest/gtest.h>

#include "reports/combined_table.hpp"
#include "reports/console.hpp"
#include "reports/gbench_report.hpp"
#include "reports/html_report.hpp"
#include "reports/json_report.hpp"
#include "reports/layouts.hpp"
#include "reports/number_format.hpp"
#include "tests/unit/reports/sample_run.hpp"

namespace zb::reports {
namespace {

nlohmann::json info_with_layout(const std::string& layout) {
  return nlohmann::json{{"layout", layout}, {"micro_batches", 2}};
}

// A zeppelin whose iterations ran `layouts` in order ("" = the plan records none).
SystemResult zeppelin_with(const std::vector<std::string>& layouts) {
  std::vector<nlohmann::json> infos;
  std::vector<double> times;
  for (const std::string& layout : layouts) {
    infos.push_back(layout.empty() ? nlohmann::json::object() : info_with_layout(layout));
    times.push_back(1.0);
  }
  return test::feasible_system(SystemSpec{"zeppelin", "zeppelin", nlohmann::json::object()}, times, 0.05,
                               infos);
}

TEST(Layouts, CountedOverTheIterationsThatRanMostFirst) {
  SystemResult zeppelin = zeppelin_with({"usp", "hierarchical", "", "hierarchical", "hybrid-dp", "usp"});
  zeppelin.iterations[1].feasible = false;  // an OOM iteration ran nothing
  // Iterations 0, 3, 4, 5 ran: usp twice, hierarchical once, hybrid-dp once (hierarchical seen first).
  const std::vector<LayoutCount> counts = count_layouts(zeppelin);
  ASSERT_EQ(counts.size(), 3U);
  EXPECT_EQ(layouts_text(counts), "usp 2, hierarchical 1, hybrid-dp 1");
  EXPECT_EQ(layouts_json(counts).dump(), R"({"usp":2,"hierarchical":1,"hybrid-dp":1})");
  EXPECT_EQ(layout_per_iteration(zeppelin),
            (std::vector<std::string>{"usp", "hierarchical", "", "hierarchical", "hybrid-dp", "usp"}));
  // Only a string names a layout; a plan without one has none.
  EXPECT_FALSE(iteration_layout(nlohmann::json{{"layout", 3}}).has_value());
  EXPECT_FALSE(iteration_layout(nlohmann::json::object()).has_value());
  EXPECT_TRUE(count_layouts(zeppelin_with({"", ""})).empty());
  EXPECT_EQ(layouts_text(merge_layouts({counts, count_layouts(zeppelin_with({"hybrid-dp", "hybrid-dp"}))})),
            "hybrid-dp 3, usp 2, hierarchical 1");
}

TEST(Layouts, ConsoleSaysThemBesideTheSpeedupWithoutWideningTheTable) {
  const RunResult run = test::sample_run();
  const RunSummary summary = summarize_run(run);
  const std::string console = console_summary(summary, ConsoleLayout::full());
  EXPECT_NE(console.find("zeppelin is faster than the best baseline ring-cp: " +
                         format_ratio(*summary.systems[0].speedup_vs_best) +
                         " (layouts: hierarchical 2, hybrid-dp 1)\n"),
            std::string::npos)
      << console;
  EXPECT_NE(console.find("layouts run (iterations each):\n  zeppelin: hierarchical 2, hybrid-dp 1\n\n"),
            std::string::npos)
      << console;
  EXPECT_EQ(console.find("  ring-cp: hierarchical"), std::string::npos);  // ring-cp records no layout
  // The same run without layouts: every line of the table is as wide as before.
  RunResult plain = run;
  for (IterationResult& it : plain.systems[0].iterations) it.plan_info.erase("layout");
  const std::string without = console_summary(summarize_run(plain), ConsoleLayout::full());
  EXPECT_EQ(without.find("layouts"), std::string::npos) << without;
  auto table = [](const std::string& text) {
    const std::size_t start = text.find("system ");
    return text.substr(start, text.find("speed-up =", start) - start);
  };
  EXPECT_EQ(table(console), table(without));
}

TEST(Layouts, JsonHtmlAndGbenchCarryThem) {
  const RunResult run = test::sample_run();
  const RunSummary summary = summarize_run(run);
  const nlohmann::ordered_json report = report_json(run, summary, test::fixed_context());
  const auto& zeppelin = report["systems"][0];
  EXPECT_EQ(zeppelin["layouts"].dump(), R"({"hierarchical":2,"hybrid-dp":1})");
  EXPECT_EQ(zeppelin["per_iteration"][0]["layout"], "hierarchical");
  EXPECT_EQ(zeppelin["per_iteration"][2]["layout"], "hybrid-dp");
  EXPECT_TRUE(report["systems"][1]["layouts"].empty());
  EXPECT_TRUE(report["systems"][1]["per_iteration"][0]["layout"].is_null());

  const std::string html = html_report(run, summary, test::fixed_context());
  EXPECT_NE(html.find(R"(<div class="layouts">layouts: hierarchical 2, hybrid-dp 1</div>)"),
            std::string::npos);
  // The table of iterations has a layout column for zeppelin only; its third row ends with hybrid-dp.
  EXPECT_NE(html.find(R"(<th class="text">zeppelin layout</th></tr>)"), std::string::npos);
  EXPECT_EQ(html.find("ring-cp layout"), std::string::npos);
  const std::size_t third_row = html.find("<tr><td>2</td>");
  ASSERT_NE(third_row, std::string::npos);
  EXPECT_EQ(html.find(R"(<td class="text">hybrid-dp</td></tr>)", third_row),
            html.find("</tr>", third_row) - std::string(R"(<td class="text">hybrid-dp</td>)").size());

  const nlohmann::ordered_json gbench = gbench_json(summary, test::fixed_context());
  for (int i = 0; i < 5; ++i)  // zeppelin's three iteration entries and its two aggregates
    EXPECT_EQ(gbench["benchmarks"][i]["label"], "layouts: hierarchical 2, hybrid-dp 1");
  EXPECT_EQ(gbench["benchmarks"][2]["name"], "sample/zeppelin/iteration_time");  // one series per system
  EXPECT_FALSE(gbench["benchmarks"][5].contains("label"));                       // ring-cp
}

TEST(Layouts, CombinedTableNamesThemPerRowAndSumsThem) {
  const RunSummary a = summarize_run(test::sample_run());
  RunResult other = test::sample_run();
  other.scenario.name = "other";
  other.systems[0] = zeppelin_with({"hybrid-dp", "hybrid-dp", "hybrid-dp"});
  const RunSummary b = summarize_run(other);
  const CombinedTable t =
      combine("lib", {combined_row(a, "a.json", "out/a"), combined_row(b, "b.json", "out/b")});
  EXPECT_EQ(layouts_text(t.rows[0].subject_layouts), "hierarchical 2, hybrid-dp 1");
  EXPECT_EQ(layouts_text(t.subject_layouts), "hybrid-dp 4, hierarchical 2");
  const std::string text = combined_text(t);
  EXPECT_NE(combined_markdown(t).find("| system | layouts |"), std::string::npos) << combined_markdown(t);
  EXPECT_NE(text.find("hierarchical 2, hybrid-dp 1"), std::string::npos) << text;
  EXPECT_NE(text.find("layouts zeppelin ran, over 6 iterations: hybrid-dp 4, hierarchical 2"),
            std::string::npos)
      << text;
  const nlohmann::ordered_json j = combined_json(t);
  EXPECT_EQ(j["rows"][1]["subject_layouts"].dump(), R"({"hybrid-dp":3})");
  EXPECT_EQ(j["rows"][0]["systems"][0]["layouts"].dump(), R"({"hierarchical":2,"hybrid-dp":1})");
  EXPECT_EQ(j["aggregates"]["subject_layouts"].dump(), R"({"hybrid-dp":4,"hierarchical":2})");
  // No row with layouts, no column.
  RunResult plain = test::sample_run();
  for (IterationResult& it : plain.systems[0].iterations) it.plan_info.erase("layout");
  const std::string without =
      combined_text(combine("lib", {combined_row(summarize_run(plain), "p.json", "out/p")}));
  EXPECT_EQ(without.find("layouts"), std::string::npos) << without;
}

}  // namespace
}  // namespace zb::reports
