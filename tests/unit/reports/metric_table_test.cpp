// The metric table (reports/metric_table.hpp): every declared figure is documented in docs/METRICS.md
// (its anchor exists) and written in report.json where its declaration says; the gate names, the keys
// `compare` tests, the gbench counters and the console's figure columns are exactly the table's; and a
// declaration is all a new figure takes: a test-only table with one more entry, fed through the summary,
// reaches report.json, the gates, compare, gbench and the console without any other change.
#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/config/known_names.hpp"
#include "reports/compare.hpp"
#include "reports/console.hpp"
#include "reports/gbench_report.hpp"
#include "reports/json_report.hpp"
#include "reports/metric_table.hpp"
#include "reports/number_format.hpp"
#include "reports/summary.hpp"
#include "tests/unit/reports/sample_run.hpp"

namespace zb::reports {
namespace {

using ojson = nlohmann::ordered_json;

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// GitHub's anchor of a Markdown heading: lower case, punctuation other than '-' and '_' dropped, spaces
// to '-'.
std::string heading_slug(const std::string& heading) {
  std::string out;
  for (const char c : heading) {
    if (c == ' ') {
      out += '-';
    } else if (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_') {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return out;
}

// Every anchor of docs/METRICS.md: each heading's slug and each explicit <a id="...">.
std::set<std::string> metrics_doc_anchors() {
  const std::string doc = read_text(std::filesystem::path(ZB_SOURCE_DIR) / "docs/METRICS.md");
  std::set<std::string> out;
  std::istringstream lines(doc);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind('#', 0) == 0) out.insert(heading_slug(line.substr(line.find_first_not_of("# "))));
  }
  const std::regex id(R"re(<a id="([^"]+)"></a>)re");
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), id); it != std::sregex_iterator(); ++it)
    out.insert((*it)[1].str());
  return out;
}

std::vector<std::string> names_where(MetricTable table, bool (*keep)(const MetricInfo&)) {
  std::vector<std::string> out;
  for (const MetricInfo& m : table) {
    if (keep(m)) out.emplace_back(m.name);
  }
  return out;
}

TEST(MetricTable, EveryFigureIsDeclaredOnceAndDocumentedInMetricsMd) {
  const std::set<std::string> anchors = metrics_doc_anchors();
  ASSERT_TRUE(anchors.contains("run-metrics")) << "docs/METRICS.md not read";
  std::set<std::string> names;
  for (const MetricInfo& m : metric_table()) {
    SCOPED_TRACE(std::string(m.name));
    EXPECT_TRUE(names.insert(std::string(m.name)).second) << "declared twice";
    EXPECT_FALSE(m.unit.empty());
    EXPECT_NE(m.value, nullptr);
    EXPECT_TRUE(anchors.contains(std::string(m.formula)))
        << "docs/METRICS.md has no anchor \"" << m.formula << "\" (a heading or <a id>)";
    // C++ and JSON spell a name one way.
    EXPECT_EQ(m.name.find("utilisation"), std::string_view::npos);
    EXPECT_EQ(m.aggregates_at.find("utilisation"), std::string_view::npos);
  }
}

TEST(MetricTable, EveryFigureIsInTheJsonReportWhereItsDeclarationSays) {
  const RunResult run = test::sample_run();
  const ojson report = report_json(run, summarize_run(run), test::fixed_context());
  for (const ojson& system : report["systems"]) {
    for (const MetricInfo& m : metric_table()) {
      SCOPED_TRACE(system["label"].get<std::string>() + " " + std::string(m.name));
      const std::string name(m.name);
      if (!m.aggregates_at.empty()) {
        const ojson::json_pointer at("/" + std::string(m.aggregates_at));
        ASSERT_TRUE(system.contains(at));
        EXPECT_TRUE(system[at].contains("count"));
      }
      if (m.sampled) {
        EXPECT_TRUE(system["samples"].contains(name));
      }
      for (const ojson& iteration : system["per_iteration"]) {
        if (!iteration["feasible"].get<bool>()) continue;
        EXPECT_EQ(iteration["metrics"].contains(ojson::json_pointer("/" + name)), m.in_iteration_metrics);
      }
      // Not in the iteration's metrics: in the iteration entry itself (planner and predicted seconds).
      if (!m.in_iteration_metrics) {
        EXPECT_TRUE(system["per_iteration"][0].contains(name));
      }
    }
  }
}

TEST(MetricTable, GateNamesAreTheTables) {
  std::vector<std::string> table = gate_metric_names(metric_table());
  std::vector<std::string> loader(known_gate_metrics.begin(), known_gate_metrics.end());
  std::sort(table.begin(), table.end());
  std::sort(loader.begin(), loader.end());
  // core/config validates gate names below the reports; this keeps its list the table's.
  EXPECT_EQ(table, loader);
  const RunResult run = test::sample_run();
  const RunSummary summary = summarize_run(run);
  for (const MetricInfo& m : metric_table()) {
    if (m.gate.empty()) continue;
    const std::optional<double> observed = gate_observed_value(
        summary, GateSpec{std::string(m.gate), "zeppelin", "", std::nullopt, std::nullopt});
    ASSERT_TRUE(observed.has_value()) << m.gate;
    EXPECT_EQ(*observed, summary.find("zeppelin")->aggregates(m.name).mean) << m.gate;
  }
}

TEST(MetricTable, CompareTestsExactlyTheTablesComparedFigures) {
  const std::vector<std::string> compared =
      names_where(metric_table(), [](const MetricInfo& m) { return m.compared; });
  EXPECT_EQ(compared, (std::vector<std::string>{"iteration_seconds", "tokens_per_second", "mfu"}));
  for (const MetricInfo& m : metric_table()) {
    if (!m.compared) continue;
    EXPECT_TRUE(m.sampled && m.in_iteration_metrics && m.better != Better::none) << m.name;
  }
  const nlohmann::json report = test::sample_report_json({});
  const ComparisonReport result = compare_reports(report, report, {});
  std::vector<std::string> zeppelin;
  for (const MetricComparison& row : result.metrics) {
    if (row.system == "zeppelin") zeppelin.push_back(row.metric);
  }
  EXPECT_EQ(zeppelin, compared);
}

TEST(MetricTable, GbenchCountersAndConsoleColumnsAreTheTables) {
  const RunSummary summary = summarize_run(test::sample_run());
  const ojson gbench = gbench_json(summary, test::fixed_context());
  const ojson& first = gbench["benchmarks"][0];
  std::vector<std::string> counters;
  bool after_time_unit = false;
  for (const auto& [key, value] : first.items()) {
    if (after_time_unit && key != "label") counters.push_back(key);
    after_time_unit = after_time_unit || key == "time_unit";
  }
  EXPECT_EQ(counters, (std::vector<std::string>{"tokens_per_second", "mfu", "tflops_per_gpu"}));
  const std::string console = console_summary(summary, ConsoleLayout::full());
  for (const MetricInfo& m : metric_table()) {
    if (m.console.title.empty()) continue;
    const std::string_view title = m.console.wide_title.empty() ? m.console.title : m.console.wide_title;
    EXPECT_NE(console.find(std::string(title)), std::string::npos) << m.name;
  }
}

// A figure no report has: the critical rank's idle seconds. Declared here, in a table of the test's own
// (the built-in one, then it), with no other change anywhere.
std::vector<MetricInfo> table_with_a_test_figure() {
  std::vector<MetricInfo> table(metric_table().begin(), metric_table().end());
  table.push_back(
      MetricInfo{.name = "test_idle_seconds",
                 .unit = "s",
                 .better = Better::lower,
                 .formula = "run-metrics",
                 .value = [](const IterationFigures& i) -> std::optional<double> {
                   if (i.metrics == nullptr) return std::nullopt;
                   return i.metrics->critical_rank_breakdown.idle;
                 },
                 .aggregates_at = "aggregates/test_idle_seconds",
                 .sampled = true,
                 .compared = true,
                 .gate = "test_idle_seconds",
                 .gbench_counter = "test_idle_seconds",
                 .gbench_position = 9,
                 .shown = Shown::seconds,
                 .console = {.title = "test idle", .importance = 50, .group = ConsoleGroup::after_speedups}});
  return table;
}

TEST(MetricTable, ADeclarationIsAllANewFigureTakes) {
  const std::vector<MetricInfo> table = table_with_a_test_figure();
  const RunResult run = test::sample_run();
  const RunSummary summary = summarize_run(run, table);
  const SystemSummary& zeppelin = *summary.find("zeppelin");
  std::vector<double> idle;
  for (const RunMetrics& m : zeppelin.per_iteration) idle.push_back(m.critical_rank_breakdown.idle);
  ASSERT_FALSE(idle.empty());
  EXPECT_EQ(zeppelin.samples("test_idle_seconds"), idle);

  // report.json: the iteration's metrics, the system's samples and aggregates.
  const ojson report = report_json(run, summary, test::fixed_context());
  const ojson& system = report["systems"][0];
  ASSERT_EQ(system["label"], "zeppelin");
  EXPECT_EQ(system["per_iteration"][0]["metrics"]["test_idle_seconds"], idle[0]);
  EXPECT_EQ(system["samples"]["test_idle_seconds"], idle);
  EXPECT_EQ(system["aggregates"]["test_idle_seconds"]["mean"], zeppelin.aggregates("test_idle_seconds").mean);
  // Everything else is as the built-in table writes it.
  ojson without = report;
  for (ojson& s : without["systems"]) {
    s["samples"].erase("test_idle_seconds");
    s["aggregates"].erase("test_idle_seconds");
    for (ojson& it : s["per_iteration"]) {
      if (it["metrics"].is_object()) it["metrics"].erase("test_idle_seconds");
    }
  }
  EXPECT_EQ(without, report_json(run, summarize_run(run), test::fixed_context()));

  // A gate on it, compare, gbench and the console.
  const std::optional<double> observed = gate_observed_value(
      summary, GateSpec{"test_idle_seconds", "zeppelin", "", std::nullopt, std::optional<double>(0.0)});
  ASSERT_TRUE(observed.has_value());
  EXPECT_EQ(*observed, zeppelin.aggregates("test_idle_seconds").mean);

  const nlohmann::json written = nlohmann::json::parse(dump_report(report));
  const ComparisonReport compared = compare_reports(written, written, {}, table);
  EXPECT_TRUE(std::any_of(compared.metrics.begin(), compared.metrics.end(), [](const MetricComparison& m) {
    return m.system == "zeppelin" && m.metric == "test_idle_seconds" && !m.higher_is_better;
  }));
  EXPECT_NE(format_comparison_text(compared).find("test_idle_seconds"), std::string::npos);

  const ojson gbench = gbench_json(summary, test::fixed_context());
  EXPECT_EQ(gbench["benchmarks"][0]["test_idle_seconds"], idle[0]);

  EXPECT_NE(console_summary(summary, ConsoleLayout::full()).find("test idle"), std::string::npos);
}

// The product's rule that planning hides behind the iteration (planner share ≤ 2 %), as the reports show and
// gate it: each feasible iteration's planner wall clock over its predicted iteration, averaged; an iteration
// that ran out of memory has no prediction and no share; the planner cell says the share and marks one
// above the limit.
TEST(PlannerShare, IsThePlannersTimeOverThePredictedIterationAndMarksTheRulesLimit) {
  RunResult run = test::sample_run({.iterations = 4, .ring_cp_oom_iterations = 1});
  const MetricInfo* planner = find_metric(metric_table(), metric::planner_seconds);
  ASSERT_NE(planner, nullptr);
  for (int slow = 0; slow < 2; ++slow) {
    if (slow == 1) {
      for (IterationResult& it : run.systems[0].iterations) it.planner_seconds = 0.05 * it.predicted_seconds;
    }
    const RunSummary summary = summarize_run(run);
    for (std::size_t k = 0; k < run.systems.size(); ++k) {
      double sum = 0;
      int feasible = 0;
      for (const IterationResult& it : run.systems[k].iterations) {
        if (!it.feasible) continue;
        sum += it.planner_seconds / it.predicted_seconds;
        ++feasible;
      }
      const SystemSummary& s = summary.systems[k];
      SCOPED_TRACE(s.label + (slow ? ", slow planner" : ""));
      EXPECT_EQ(s.aggregates(metric::planner_share).count, feasible);
      const std::string cell = planner->console.cell(s, true), narrow = planner->console.cell(s, false);
      if (feasible == 0) {  // never fitted: a planner time, no share
        EXPECT_EQ(cell.find('%'), std::string::npos) << cell;
        continue;
      }
      EXPECT_NEAR(s.aggregates(metric::planner_share).mean, sum / feasible, 1e-15);
      EXPECT_NE(cell.find("(" + format_share(sum / feasible)), std::string::npos) << cell;
      const bool over = sum / feasible > planner_share_limit;
      EXPECT_EQ(cell.find("over 2") != std::string::npos, over) << cell;
      // The narrow table names the share only where it breaks the rule.
      const std::string share_text = cell.substr(cell.find(" ("), cell.find(')') + 1 - cell.find(" ("));
      EXPECT_EQ(narrow.find(share_text) != std::string::npos, over) << narrow;
      EXPECT_EQ(narrow.find("ms"), cell.find("ms")) << narrow;  // the time, first
      EXPECT_EQ(over, slow == 1 && k == 0);
    }
    // The gate reads the same mean: zeppelin's 1 % passes at most 2 %, its 5 % does not.
    const std::optional<double> observed = gate_observed_value(
        summary, GateSpec{"planner_share", "zeppelin", "", std::nullopt, planner_share_limit});
    ASSERT_TRUE(observed.has_value());
    EXPECT_EQ(*observed <= planner_share_limit, slow == 0) << *observed;
  }
  // report.json: per iteration, null where the iteration ran out of memory.
  const ojson report = report_json(run, summarize_run(run), test::fixed_context());
  const ojson& ring = report["systems"][1]["per_iteration"];
  EXPECT_TRUE(ring[3]["planner_share"].is_null());
  EXPECT_NEAR(ring[0]["planner_share"].get<double>(),
              run.systems[1].iterations[0].planner_seconds / run.systems[1].iterations[0].predicted_seconds,
              1e-15);
}

}  // namespace
}  // namespace zb::reports
