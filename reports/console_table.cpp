#include "reports/console_table.hpp"

#include <algorithm>
#include <numeric>
#include <optional>

#include <fmt/format.h>

#include "reports/number_format.hpp"

namespace zb::reports {
namespace {

struct Column {
  std::string title;
  int importance = 0;  // 0 = kept longest
  Align align = Align::right;
  std::vector<std::string> cells;  // one per system
};

std::string speedup_cell(const SystemSummary& s, const SystemSummary& baseline,
                         std::optional<double> speedup) {
  if (&baseline == &s) return "\u2014";
  return speedup ? format_ratio(*speedup) : "n/a";
}

std::vector<Column> all_columns(const RunSummary& summary, bool wide) {
  std::vector<const SystemSummary*> baselines;
  for (const std::string& label : summary.baseline_ranking) baselines.push_back(summary.find(label));
  const SystemSummary* best = summary.best_baseline ? summary.find(*summary.best_baseline) : nullptr;

  std::vector<Column> columns;
  // `cell` fills the row of every system that fitted in every iteration; `every_row` the others' too.
  auto add = [&](std::string title, int importance, auto cell, Align align = Align::right,
                 bool every_row = false) {
    Column c{std::move(title), importance, align, {}};
    for (const SystemSummary& s : summary.systems)
      c.cells.push_back(every_row || s.feasible() ? cell(s) : std::string());
    columns.push_back(std::move(c));
  };
  add(
      "system", 0, [](const SystemSummary& s) { return s.label; }, Align::left, true);
  // The metric table's columns (reports/metric_table.hpp), in its order, around the speed-ups.
  auto add_metrics = [&](ConsoleGroup group) {
    for (const MetricInfo& m : summary.metrics) {
      const ConsoleColumn& c = m.console;
      if (c.title.empty() || c.group != group) continue;
      add(
          std::string(wide && !c.wide_title.empty() ? c.wide_title : c.title), c.importance,
          [&](const SystemSummary& s) {
            return c.cell != nullptr ? c.cell(s, wide) : shown_text(m.shown, s.aggregates(m.name).mean);
          },
          c.align, c.every_row);
    }
  };
  add_metrics(ConsoleGroup::before_speedups);
  if (best != nullptr) {
    add(wide ? "vs best (" + best->label + ")" : "vs best", 2,
        [&](const SystemSummary& s) { return speedup_cell(s, *best, s.speedup_vs_best); });
  }
  for (std::size_t b = 0; b < baselines.size(); ++b) {
    const SystemSummary* baseline = baselines[b];
    add("vs " + baseline->label, 9 + static_cast<int>(b), [&](const SystemSummary& s) {
      return speedup_cell(s, *baseline, summary.speedup(s.label, baseline->label));
    });
  }
  add_metrics(ConsoleGroup::after_speedups);
  return columns;
}

// Width of the rendered table: the widest cell of each column, two spaces between columns.
std::size_t table_width(const std::vector<Column>& columns, const std::vector<bool>& kept) {
  std::size_t total = 0, shown = 0;
  for (std::size_t c = 0; c < columns.size(); ++c) {
    if (!kept[c]) continue;
    std::size_t w = display_width(columns[c].title);
    for (const std::string& cell : columns[c].cells) w = std::max(w, display_width(cell));
    total += w;
    ++shown;
  }
  return total + (shown > 0 ? 2 * (shown - 1) : 0);
}

}  // namespace

SystemsTable systems_table(const RunSummary& summary, const ConsoleLayout& layout) {
  const std::vector<Column> columns = all_columns(summary, layout.wide);
  std::vector<bool> kept(columns.size(), true);
  // Least important first; the system column (importance 0) is never left out.
  std::vector<std::size_t> by_importance(columns.size());
  std::iota(by_importance.begin(), by_importance.end(), 0);
  std::stable_sort(by_importance.begin(), by_importance.end(), [&](std::size_t a, std::size_t b) {
    return columns[a].importance > columns[b].importance;
  });
  std::vector<std::string> left_out;
  for (const std::size_t c : by_importance) {
    if (layout.wide || table_width(columns, kept) <= layout.width || columns[c].importance == 0) break;
    kept[c] = false;
    left_out.insert(left_out.begin(), columns[c].title);
  }
  SystemsTable out;
  out.left_out = std::move(left_out);
  for (std::size_t c = 0; c < columns.size(); ++c) {
    if (!kept[c]) continue;
    out.table.header.push_back(columns[c].title);
    out.table.align.push_back(columns[c].align);
  }
  for (std::size_t r = 0; r < summary.systems.size(); ++r) {
    std::vector<std::string> row;
    for (std::size_t c = 0; c < columns.size(); ++c)
      if (kept[c]) row.push_back(columns[c].cells[r]);
    // An infeasible system's row ends at its "OOM (...)" cell, as it always has.
    if (!summary.systems[r].feasible()) row.resize(std::min<std::size_t>(row.size(), 2));
    out.table.rows.push_back(std::move(row));
  }
  return out;
}

}  // namespace zb::reports
