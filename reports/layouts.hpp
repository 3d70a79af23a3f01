#pragma once
// Which layout each iteration's plan ran. A strategy that chooses between layouts records its choice in
// plan::Plan::info["layout"] (zeppelin: "hierarchical" or "flat" for its own partition; with best_of, the
// baseline layout that won: "packed-cp", "hybrid-dp", "usp"), and a speed-up means little unless the
// reader sees whose layout earned it, so every report shows it per iteration and counted per system.
// Definitions: docs/METRICS.md ("Report figures", layouts).
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/run/run_result.hpp"

namespace zb::reports {

struct LayoutCount {
  std::string layout;
  int iterations = 0;
};

// The layout one iteration's plan records (info["layout"], a string), or none.
[[nodiscard]] std::optional<std::string> iteration_layout(const nlohmann::json& plan_info);

// Every iteration's layout, indexed by iteration number ("" where the plan records none, or where the
// system did not run that iteration: `run --plan` runs one).
[[nodiscard]] std::vector<std::string> layout_per_iteration(const SystemResult& result);

// The layouts of the iterations that ran (the feasible ones), each with its count: most iterations
// first, equal counts in order of first appearance. Empty when no such plan records a layout.
[[nodiscard]] std::vector<LayoutCount> count_layouts(const SystemResult& result);

// Counts merged (e.g. over the scenarios of a combined table), ordered as count_layouts orders them.
[[nodiscard]] std::vector<LayoutCount> merge_layouts(const std::vector<std::vector<LayoutCount>>& counts);

// "hierarchical 9, hybrid-dp 1"; empty for no layouts.
[[nodiscard]] std::string layouts_text(const std::vector<LayoutCount>& layouts);

// {"hierarchical": 9, "hybrid-dp": 1} in the same order.
[[nodiscard]] nlohmann::ordered_json layouts_json(const std::vector<LayoutCount>& layouts);

}  // namespace zb::reports
