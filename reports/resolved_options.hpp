#pragma once
// The configuration each system actually ran with. A scenario may leave a choice to the strategy
// ("degree": "auto"), and a speed-up means little unless the reader sees which configuration of the
// baseline it beat, so every report shows these next to the speed-ups. Definition: docs/METRICS.md
// ("Report figures", resolved options).
#include <nlohmann/json.hpp>
#include <string>

#include "core/config/scenario.hpp"
#include "core/run/run_result.hpp"

namespace zb::reports {

// One iteration's resolved options: the system's options as given (the loader fills in the defaults;
// catalog order), the value the plan reports under the same key replacing the requested one; then the
// plan's other one-value facts (strings, numbers, booleans of plan::Plan::info, by name: "groups",
// "packs", ...).
// Structured facts (zeppelin's per-micro-batch thresholds) are left out: they are no option.
[[nodiscard]] nlohmann::ordered_json iteration_resolved_options(const SystemSpec& system,
                                                                const nlohmann::json& plan_info);

// Over the iterations the system's figures come from (the feasible ones; every iteration when none
// fitted, so that the report still says what the strategy tried): key → the value when those
// iterations agree, else the array of their distinct values in first-seen order, null standing for
// "this iteration's plan does not record it" (option values are scalars, so an array always means
// "differed between iterations").
[[nodiscard]] nlohmann::ordered_json system_resolved_options(const SystemResult& result);

// One line for people: "degree 8 (auto), dealing balanced, groups 2, packs 9 or 10". An option whose
// resolved value differs from the requested one names the request in parentheses; a fact
// "<option>_choice" that only repeats that request is folded into it.
[[nodiscard]] std::string resolved_options_text(const SystemSpec& system,
                                                const nlohmann::ordered_json& resolved);

}  // namespace zb::reports
