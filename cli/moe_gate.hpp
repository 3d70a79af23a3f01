#pragma once
// Until the MoE layer is lowered into the Program (issue 34, item 4), a scenario whose model has experts
// would plan and run with its experts priced at balanced routing (the cost model's MoE terms): the
// attention right, the dispatch and combine all-to-alls and the expert loads silently missing. `run` and
// `plan` refuse it here instead, where a run starts; `validate` accepts it, so MoE scenarios can be written
// and checked now.
#include <string>

#include "core/common/error.hpp"
#include "core/config/scenario.hpp"

namespace zb::cli {

inline void refuse_unlowered_moe(const Scenario& scenario, const std::string& file) {
  if (!scenario.model.has_experts()) return;
  const std::string model = scenario.model.preset.empty() ? "the model" : "model " + scenario.model.preset;
  throw_input_error(
      {file, "model.moe"},
      "the MoE layer is not lowered yet: " + model + " has " + std::to_string(scenario.model.moe.experts) +
          " experts, and running it would time its experts at balanced routing without their all-to-alls "
          "(issue 34)",
      "`validate` checks MoE scenarios now; run a dense model meanwhile (docs/MOE.md)");
}

}  // namespace zb::cli
