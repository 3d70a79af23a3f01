#pragma once
// `run --set KEY=VALUE` (repeatable): any scenario key, as the scenario file would hold it, set before the
// scenario is checked, the way `-D`/`--config` flags of other tools override a file. KEY is a dotted
// path into the file's JSON (`workload.iterations`, `cluster.nodes`, `systems.1.degree` where systems[1]
// is an object: a number steps into an array); VALUE is JSON (`5`, `true`, `"auto"`, `[1,2]`), or else taken
// as a string (`wikipedia`).
#include <filesystem>
#include <string>
#include <vector>

#include "core/config/scenario.hpp"
#include "core/run/run_result.hpp"

namespace zb::cli {

// The scenario in `file` with every assignment applied, checked as a file would be (errors name the file
// and "--set"); one override per assignment is appended to `overrides` (its JSON pointer and value).
// Exit 2 for an assignment without '=', an empty key, or a path through a value that is not an object
// or array.
[[nodiscard]] Scenario load_scenario_with_sets(const std::filesystem::path& file,
                                               const std::vector<std::string>& assignments,
                                               std::vector<ScenarioOverride>& overrides);

}  // namespace zb::cli
