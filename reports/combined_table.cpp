#include "reports/combined_table.hpp"

#include <algorithm>
#include <cmath>

namespace zb::reports {
namespace {

// Within ±0.5 % of the best baseline is a tie: the simulator's figures are exact, but a Zeppelin plan
// that adopted a baseline's layout can differ from it by a rounding of its estimate, and a "win" of
// 1.001× would be a claim the comparison did not earn.
constexpr double kTie = 0.005;

RatioAggregates aggregate_values(std::vector<std::pair<double, std::string>> values) {
  RatioAggregates a;
  a.count = static_cast<int>(values.size());
  if (values.empty()) return a;
  std::sort(values.begin(), values.end());
  double sum = 0, log_sum = 0;
  for (const auto& [v, scenario] : values) {
    sum += v;
    log_sum += std::log(v);
  }
  const auto n = values.size();
  a.mean = sum / static_cast<double>(n);
  a.geometric_mean = std::exp(log_sum / static_cast<double>(n));
  a.median = n % 2 == 1 ? values[n / 2].first : 0.5 * (values[n / 2 - 1].first + values[n / 2].first);
  a.min = values.front().first;
  a.min_scenario = values.front().second;
  a.max = values.back().first;
  a.max_scenario = values.back().second;
  return a;
}

struct RowFigure {
  double value = 0;
  std::string scenario;
  std::optional<RatioInterval> interval;
};

RatioAggregates aggregate(const std::vector<RowFigure>& figures) {
  std::vector<std::pair<double, std::string>> values;
  for (const RowFigure& f : figures) values.emplace_back(f.value, f.scenario);
  RatioAggregates a = aggregate_values(std::move(values));
  for (const RowFigure& f : figures) {
    if (!f.interval) {
      ++a.untested;
    } else if (!f.interval->significant) {
      ++a.not_significant;
    } else {
      ++(f.interval->geometric_mean > 1 ? a.significantly_faster : a.significantly_slower);
    }
  }
  return a;
}

// The paired interval of `subject`'s speed-up against `baseline`: the ratios baseline_i / subject_i of
// their iteration times. Only where the speed-up exists: both fitted in every iteration, so their samples
// are the same iterations in the same order.
std::optional<RatioInterval> speedup_interval(const SystemSummary* subject, const SystemSummary* baseline) {
  if (subject == nullptr || baseline == nullptr || !subject->fits_every_iteration() ||
      !baseline->fits_every_iteration()) {
    return std::nullopt;
  }
  return paired_ratio_interval(subject->samples(metric::iteration_seconds),
                               baseline->samples(metric::iteration_seconds));
}

}  // namespace

std::string verdict_of(const CombinedRow& row) {
  if (!row.speedup_vs_best) return "n/a";
  if (*row.speedup_vs_best > 1 + kTie) return "wins";
  if (*row.speedup_vs_best < 1 - kTie) return "loses";
  return "ties";
}

CombinedRow combined_row(const RunSummary& summary, const std::string& file, const std::string& report_dir) {
  CombinedRow row;
  row.scenario = summary.scenario;
  row.file = file;
  row.report_dir = report_dir;
  row.backend = summary.backend;
  row.simulated = summary.simulated;
  row.cluster = summary.cluster;
  row.model = summary.model;
  row.hardware_profile = summary.hardware_profile;
  row.long_documents = summary.long_documents;
  row.gates_passed = summary.gates_passed();
  for (const SystemSummary& s : summary.systems) {
    CombinedSystem c{s.label, s.is_baseline, std::nullopt, s.feasible_iterations, s.iterations, s.layouts};
    if (s.fits_every_iteration()) c.mean_seconds = s.aggregates(metric::iteration_seconds).mean;
    row.systems.push_back(c);
  }
  const auto subject = std::find_if(summary.systems.begin(), summary.systems.end(),
                                    [](const SystemSummary& s) { return !s.is_baseline; });
  row.best_baseline = summary.best_baseline;
  if (summary.best_baseline)
    row.best_seconds = summary.find(*summary.best_baseline)->aggregates(metric::iteration_seconds).mean;
  if (subject == summary.systems.end()) return row;
  row.subject = subject->label;
  row.subject_strategy = subject->strategy;
  if (subject->fits_every_iteration())
    row.subject_seconds = subject->aggregates(metric::iteration_seconds).mean;
  row.subject_layouts = subject->layouts;
  row.speedup_vs_best = subject->speedup_vs_best;
  if (row.speedup_vs_best)
    row.interval_vs_best = speedup_interval(&*subject, summary.find(*summary.best_baseline));
  for (const std::string& baseline : summary.baseline_ranking) {
    const std::optional<double> speedup = summary.speedup(subject->label, baseline);
    row.speedups.emplace_back(baseline, speedup);
    row.intervals.emplace_back(baseline,
                               speedup ? speedup_interval(&*subject, summary.find(baseline)) : std::nullopt);
  }
  return row;
}

CombinedRow failed_row(const std::string& scenario, const std::string& file, const std::string& error) {
  CombinedRow row;
  row.scenario = scenario;
  row.file = file;
  row.error = error;
  row.gates_passed = false;
  return row;
}

CombinedTable combine(std::string title, std::vector<CombinedRow> rows) {
  CombinedTable t;
  t.title = std::move(title);
  t.rows = std::move(rows);
  std::vector<RowFigure> versus_best;
  for (const CombinedRow& row : t.rows) {
    for (const auto& [baseline, value] : row.speedups) {
      if (std::find(t.baseline_columns.begin(), t.baseline_columns.end(), baseline) ==
          t.baseline_columns.end()) {
        t.baseline_columns.push_back(baseline);
      }
    }
    if (row.speedup_vs_best)
      versus_best.push_back({*row.speedup_vs_best, row.scenario, row.interval_vs_best});
    const std::string verdict = verdict_of(row);
    t.wins += verdict == "wins";
    t.ties += verdict == "ties";
    t.losses += verdict == "loses";
  }
  std::vector<std::vector<LayoutCount>> layouts;
  for (const CombinedRow& row : t.rows) layouts.push_back(row.subject_layouts);
  t.subject_layouts = merge_layouts(layouts);
  t.versus_best = aggregate(versus_best);
  for (const std::string& baseline : t.baseline_columns) {
    std::vector<RowFigure> values;
    for (const CombinedRow& row : t.rows) {
      for (std::size_t k = 0; k < row.speedups.size(); ++k) {
        const auto& [label, value] = row.speedups[k];
        if (label != baseline || !value) continue;
        values.push_back(
            {*value, row.scenario, k < row.intervals.size() ? row.intervals[k].second : std::nullopt});
      }
    }
    t.versus_baseline.emplace_back(baseline, aggregate(values));
  }
  return t;
}

}  // namespace zb::reports
