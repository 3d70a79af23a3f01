// The HTML report: self-contained (no script, no network), every chart present, scenario strings escaped,
// and laid out to read on a phone as on a desktop (tests/browser/check_report_layout.sh measures that in
// Chromium; these tests pin the markup it relies on).
#include <gtest/gtest.h>

#include <cmath>
#include <regex>

#include "reports/html_charts.hpp"
#include "reports/html_report.hpp"
#include "reports/html_style.hpp"
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

// Wide content scrolls inside its section on a narrow screen rather than widening the page or losing
// columns: every table and every chart sits in a horizontal scroll container.
TEST(HtmlReportLayout, EveryTableAndChartIsInAScrollContainer) {
  const std::string html = sample_html("sample");
  const std::string opener = R"(<div class="scroll-x">)";
  int checked = 0;
  for (const std::string element : {"<table", "<svg "}) {
    for (std::size_t at = html.find(element); at != std::string::npos; at = html.find(element, at + 1)) {
      const std::size_t container = html.rfind(opener, at);
      ASSERT_NE(container, std::string::npos) << element << " at " << at;
      // Nothing closes the container between it and the element (the profile's source line may lie between).
      EXPECT_EQ(html.substr(container, at - container).find("</div>"), std::string::npos)
          << element << " at " << at << " is not inside a scroll container";
      ++checked;
    }
  }
  EXPECT_EQ(checked, count_of(html, "<table") + 10);
}

// A chart scales down with its column only as far as keeps its smallest text legible; below that width
// it scrolls. Each <svg> carries that floor, and no chart text in the stylesheet is smaller than the floor
// assumes.
TEST(HtmlReportLayout, ChartsNeverShrinkBelowLegibleText) {
  const std::string html = sample_html("sample");
  const std::regex svg(R"re(<svg [^>]*width="(\d+)" height="\d+" style="min-width:(\d+)px")re");
  int charts = 0;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), svg); it != std::sregex_iterator(); ++it) {
    const double width = std::stod((*it)[1]), min_width = std::stod((*it)[2]);
    EXPECT_GE(min_width / width * chart_smallest_font_px, chart_legible_font_px - 1e-9) << it->str();
    EXPECT_LE(min_width, width);
    ++charts;
  }
  EXPECT_EQ(charts, 10);
  EXPECT_GE(chart_legible_font_px, 9);
  const std::string style = html_report_style;
  const std::regex chart_font(R"re(svg text[^{]*\{[^}]*font-size:\s*([0-9.]+)px)re");
  int fonts = 0;
  for (auto it = std::sregex_iterator(style.begin(), style.end(), chart_font); it != std::sregex_iterator();
       ++it) {
    EXPECT_GE(std::stod((*it)[1]), chart_smallest_font_px) << it->str();
    ++fonts;
  }
  EXPECT_GE(fonts, 5);
}

// Legends are HTML above the chart, where they wrap at any width, not SVG text that the chart's edge cuts
// off: every part of the time breakdown is named, and legend titles are escaped like every other string.
TEST(HtmlReportLayout, LegendsAreHtmlListsThatWrap) {
  const std::string html = sample_html("sample");
  for (const char* part :
       {"attention", "linear (GEMMs)", "remap all-to-all", "TP collectives", "exposed communication",
        "embedding, LM head, loss", "exposed gradient sync", "optimizer step", "idle (waiting)"}) {
    EXPECT_NE(html.find(std::string("</span>") + part + "</li>"), std::string::npos) << part;
  }
  EXPECT_EQ(count_of(html, R"(class="legend")"),
            count_of(html, R"(<ul class="legend">)"));  // none in an <svg>
  EXPECT_NE(html.find("ul.legend { display:flex; flex-wrap:wrap;"), std::string::npos);

  const SvgCanvas canvas(100, 50, "a <chart>");
  const std::string figure = chart_figure(canvas, {{"#123456", "<b>&", true}}, "caption <i>");
  EXPECT_NE(figure.find(R"(<span class="swatch line" style="background:#123456"></span>&lt;b&gt;&amp;</li>)"),
            std::string::npos)
      << figure;
  EXPECT_NE(figure.find(R"(<p class="caption">caption &lt;i&gt;</p>)"), std::string::npos);
  EXPECT_NE(figure.find(R"(aria-label="a &lt;chart&gt;")"), std::string::npos);
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
  const std::string chart = nic_utilization_chart(summary.systems[0], run.systems[0].first_trace);
  EXPECT_NE(chart.find("NIC utilisation heatmap"), std::string::npos);
  EXPECT_NE(chart.find("colour = max(tx, rx) utilisation"), std::string::npos);
}

TEST(HtmlCharts, NvlinkPanelHasABarPairPerGpuOrPerNodeAndSaysWhenNothingWasRecorded) {
  const RunResult run = test::sample_run();
  RunSummary summary = summarize_run(run);
  SystemSummary& zeppelin = summary.systems[0];
  const std::string per_gpu = nvlink_utilization_chart(zeppelin);
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
  const std::string per_node = nvlink_utilization_chart(zeppelin);
  EXPECT_NE(per_node.find("NVLink utilisation per node, zeppelin"), std::string::npos);
  EXPECT_NE(per_node.find("node 3: mean over its GPUs"), std::string::npos);
  zeppelin.nvlinks.clear();
  EXPECT_NE(nvlink_utilization_chart(zeppelin).find("records no NVLink loads"), std::string::npos);
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
