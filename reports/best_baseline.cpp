#include "reports/best_baseline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "reports/number_format.hpp"
#include "reports/summary.hpp"

namespace zb::reports {
namespace {

std::string oom_text(const SystemSummary& s) {
  return fmt::format("out of memory in {} of {} iterations", s.iterations - s.feasible_iterations,
                     s.iterations);
}

// The baselines that cannot be the best one, with why: "ring-cp (out of memory in 1 of 3 iterations)".
std::string ineligible_list(const RunSummary& summary) {
  std::string out;
  for (const SystemSummary& s : summary.systems) {
    if (!s.is_baseline || s.fits_every_iteration()) continue;
    out += fmt::format("{}{} ({})", out.empty() ? "" : ", ", s.label, oom_text(s));
  }
  return out;
}

// Two decimals, as every speed-up is shown, unless they would round a loss or a win to "1.00×": a
// sentence saying "slower" must show a number below 1.
std::string ratio_text(double ratio) {
  if (ratio != 1 && std::fabs(ratio - 1) < 0.005) return fmt::format("{:.6g}\u00d7", ratio);
  return format_ratio(ratio);
}

bool has_baseline(const RunSummary& summary) {
  return std::any_of(summary.systems.begin(), summary.systems.end(),
                     [](const SystemSummary& s) { return s.is_baseline; });
}

}  // namespace

std::vector<std::string> rank_baselines(const std::vector<SystemSummary>& systems) {
  std::vector<const SystemSummary*> baselines;
  for (const SystemSummary& s : systems) {
    if (s.is_baseline) baselines.push_back(&s);
  }
  // Stable: equal means (and every baseline without a comparable mean) keep scenario order.
  std::stable_sort(baselines.begin(), baselines.end(), [](const SystemSummary* a, const SystemSummary* b) {
    if (a->fits_every_iteration() != b->fits_every_iteration()) return a->fits_every_iteration();
    return a->fits_every_iteration() &&
           a->aggregates(metric::iteration_seconds).mean < b->aggregates(metric::iteration_seconds).mean;
  });
  std::vector<std::string> labels;
  for (const SystemSummary* s : baselines) labels.push_back(s->label);
  return labels;
}

std::optional<std::string> best_baseline_of(const std::vector<SystemSummary>& systems,
                                            const std::vector<std::string>& ranking) {
  if (ranking.empty()) return std::nullopt;
  const auto first = std::find_if(systems.begin(), systems.end(),
                                  [&](const SystemSummary& s) { return s.label == ranking.front(); });
  if (first == systems.end() || !first->fits_every_iteration() ||
      !(first->aggregates(metric::iteration_seconds).mean > 0))
    return std::nullopt;
  return first->label;
}

std::string best_baseline_statement(const RunSummary& summary) {
  if (!has_baseline(summary)) return "";
  const std::string ineligible = ineligible_list(summary);
  const SystemSummary* best = summary.best_baseline ? summary.find(*summary.best_baseline) : nullptr;
  if (best == nullptr)
    return "no best baseline, since no baseline fitted in memory in every iteration: " + ineligible;
  std::string out = fmt::format(
      "best baseline: {} (mean iteration time {}), the fastest baseline that fitted in every iteration",
      best->label, format_seconds(best->aggregates(metric::iteration_seconds).mean));
  if (!ineligible.empty()) out += "; not eligible: " + ineligible;
  return out;
}

std::string versus_best_statement(const RunSummary& summary, const SystemSummary& system) {
  if (system.is_baseline || !has_baseline(summary)) return "";
  // Whose layout earned the figure: a system that chose between layouts says which, per iteration counted.
  const std::string layouts =
      system.layouts.empty() ? "" : " (layouts: " + layouts_text(system.layouts) + ")";
  if (!summary.best_baseline) {
    return fmt::format(
        "{}: no speed-up against a best baseline, since no baseline fitted in every iteration{}",
        system.label, layouts);
  }
  const std::string& best = *summary.best_baseline;
  if (!system.fits_every_iteration()) {
    return fmt::format("{} ran {}: no speed-up against the best baseline {}{}", system.label,
                       oom_text(system), best, layouts);
  }
  if (!system.speedup_vs_best)
    return fmt::format("{}: no speed-up against the best baseline {}{}", system.label, best, layouts);
  const double ratio = *system.speedup_vs_best;
  const char* comparison = ratio > 1 ? "faster than" : ratio < 1 ? "slower than" : "as fast as";
  return fmt::format("{} is {} the best baseline {}: {}{}", system.label, comparison, best, ratio_text(ratio),
                     layouts);
}

}  // namespace zb::reports
