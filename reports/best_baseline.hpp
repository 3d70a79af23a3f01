#pragma once
// The strongest baseline leads every report. A speed-up over a weak baseline says little, so the
// reports rank the baselines, name the best one, and give every system's speed-up against it; where a
// system is slower than the best baseline they say so in words (the project's fairness rule: where
// Zeppelin loses, the report says so). Definitions: docs/METRICS.md ("Report figures").
#include <optional>
#include <string>
#include <vector>

namespace zb::reports {

struct SystemSummary;
struct RunSummary;

// The baselines' labels from strongest to weakest: those that fitted in memory in every iteration by
// mean iteration time, fastest first; then the others (no comparable mean) in scenario order. Ties keep
// scenario order.
[[nodiscard]] std::vector<std::string> rank_baselines(const std::vector<SystemSummary>& systems);

// The best baseline: the fastest baseline that fitted in every iteration (the first of the ranking
// when it fitted), or none.
[[nodiscard]] std::optional<std::string> best_baseline_of(const std::vector<SystemSummary>& systems,
                                                          const std::vector<std::string>& ranking);

// "best baseline: uniform-cp[degree=8] (mean iteration time 1.23 s), the fastest baseline that fitted
// in every iteration; not eligible: ring-cp (out of memory in 1 of 3 iterations)", or "no best baseline,
// since no baseline fitted in memory in every iteration: ..." naming each with why.
// Empty when the run has no baseline at all.
[[nodiscard]] std::string best_baseline_statement(const RunSummary& summary);

// For a system that is no baseline: "zeppelin is faster than the best baseline uniform-cp[degree=8]:
// 1.52×", "zeppelin is slower than the best baseline ...: 0.92×", or why there is no such figure; a
// system whose plans record their layout ends with them, "(layouts: hierarchical 9, hybrid-dp 1)".
// Empty for a baseline and when the run has no baseline.
[[nodiscard]] std::string versus_best_statement(const RunSummary& summary, const SystemSummary& system);

}  // namespace zb::reports
