// The HTML report: self-contained (no script, no network), every chart present, scenario strings escaped.
#include <gtest/gtest.h>

#include "reports/html_charts.hpp"
#include "reports/html_report.hpp"
#include "reports/svg.hpp"
#include "tests/unit/reports/sample_run.hpp"

namespace zb::reports {
namespace {

std::string sample_html(const std::string& scenario_name) {
  test::SampleOptions options;
  options.scenario_name = scenario_name;
  const RunResult run = test::sample_run(options);
  return html_report(run, summarize_run(run), test::fixed_context());
}

int count_of(const std::string& text, const std::string& what) {
  int count = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

TEST(HtmlEscape, EscapesEveryMarkupCharacter) {
  EXPECT_EQ(html_escape(R"(<a href="x">'&'</a>)"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(html_escape("plain µs"), "plain µs");
}

TEST(HtmlReport, ScenarioNameIsEscaped) {
  const std::string html = sample_html("<script>alert(1)</script>");
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("&amp; &lt;markup&gt;"), std::string::npos);  // the description too
}

TEST(HtmlReport, IsSelfContained) {
  const std::string html = sample_html("sample");
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0U);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // only the SVG namespace
  EXPECT_EQ(html.find("https://"), std::string::npos);
}

TEST(HtmlReport, HasVerdictTablesAndEveryChart) {
  const std::string html = sample_html("sample");
  EXPECT_NE(html.find("FAIL &#8212; 1 of 2 gates failed"), std::string::npos);
  EXPECT_NE(html.find("SIMULATED"), std::string::npos);
  EXPECT_NE(html.find("figures are SIMULATED, not measured"), std::string::npos);
  EXPECT_NE(html.find("out of memory in all 3 iterations"), std::string::npos);
  EXPECT_NE(html.find("<th>vs ring-cp</th>"), std::string::npos);
  for (const char* chart :
       {"Iteration time breakdown", "Compute time per GPU, zeppelin",
        "NIC utilisation over time per NIC, zeppelin", "NVLink utilisation per GPU, zeppelin",
        "Histogram of document lengths", "Timeline of the first ranks, ring-cp"}) {
    EXPECT_NE(html.find(chart), std::string::npos) << chart;
  }
  // Two feasible systems × (GPU load, NIC, NVLink, timeline) + breakdown + histogram.
  EXPECT_EQ(count_of(html, "<svg "), 10);
  EXPECT_NE(html.find("<th>NVLink util. mean / max</th>"), std::string::npos);
  EXPECT_EQ(count_of(html, "<svg "), count_of(html, "</svg>"));
  // Axis titles carry units.
  EXPECT_NE(html.find("time per iteration on the critical rank (s)"), std::string::npos);
  EXPECT_NE(html.find("document length (tokens, log\u2082 scale)"), std::string::npos);
}

TEST(HtmlCharts, ManyGpusBecomeAHeatmap) {
  RunResult run = test::sample_run();
  Trace trace = run.systems[0].first_trace;
  trace.world_size = 128;
  trace.gpus_per_node = 8;
  const RunSummary summary = summarize_run(run);
  const std::string chart = gpu_load_chart(summary.systems[0], trace);
  EXPECT_NE(chart.find("heatmap"), std::string::npos);
}

TEST(HtmlCharts, ManyNicsBecomeAHeatmap) {
  const RunResult run = test::sample_run();
  RunSummary summary = summarize_run(run);
  RunMetrics& metrics = summary.systems[0].per_iteration.front();
  const std::vector<NicMetrics> four = metrics.nics;
  while (static_cast<int>(metrics.nics.size()) <= nic_small_multiples_limit) {
    metrics.nics.insert(metrics.nics.end(), four.begin(), four.end());
  }
  const std::string chart = nic_utilisation_chart(summary.systems[0], run.systems[0].first_trace);
  EXPECT_NE(chart.find("NIC utilisation heatmap"), std::string::npos);
  EXPECT_NE(chart.find("colour = max(tx, rx) utilisation"), std::string::npos);
}

TEST(HtmlCharts, NvlinkPanelHasABarPairPerGpuOrPerNodeAndSaysWhenNothingWasRecorded) {
  const RunResult run = test::sample_run();
  RunSummary summary = summarize_run(run);
  SystemSummary& zeppelin = summary.systems[0];
  const std::string per_gpu = nvlink_utilisation_chart(zeppelin);
  EXPECT_NE(per_gpu.find("NVLink utilisation per GPU, zeppelin"), std::string::npos);
  // Rank 1 of the sample sends 4 GB and receives 2 GB per iteration.
  EXPECT_NE(per_gpu.find("node 0 GPU 1: tx"), std::string::npos);
  const std::vector<NvlinkMetrics> eight = zeppelin.nvlinks;
  for (int node = 1; static_cast<int>(zeppelin.nvlinks.size()) <= gpu_bar_chart_limit; ++node) {
    for (NvlinkMetrics g : eight) {
      g.node = 2 * node + g.node;
      zeppelin.nvlinks.push_back(g);
    }
  }
  const std::string per_node = nvlink_utilisation_chart(zeppelin);
  EXPECT_NE(per_node.find("NVLink utilisation per node, zeppelin"), std::string::npos);
  EXPECT_NE(per_node.find("node 3: mean over its GPUs"), std::string::npos);
  zeppelin.nvlinks.clear();
  EXPECT_NE(nvlink_utilisation_chart(zeppelin).find("records no NVLink loads"), std::string::npos);
}

TEST(HtmlCharts, TimeUnitFollowsTheRange) {
  EXPECT_STREQ(time_unit_for(2.0).symbol, "s");
  EXPECT_STREQ(time_unit_for(0.02).symbol, "ms");
  EXPECT_STREQ(time_unit_for(2e-5).symbol, "\u00b5s");
}

TEST(SvgAxes, NiceTicks) {
  EXPECT_EQ(nice_ticks(0, 10, 5), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  const std::vector<double> ticks = nice_ticks(0, 0.9, 4);
  ASSERT_EQ(ticks.size(), 6U);  // 0 … 1.0: the last tick covers the data
  EXPECT_NEAR(ticks[3], 0.6, 1e-12);
  EXPECT_EQ(tick_label(ticks[3]), "0.6");
}

}  // namespace
}  // namespace zb::reports
