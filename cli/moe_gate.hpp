#pragma once
// What of an MoE scenario is not lowered yet (issue 34): its MoE layer (router, dispatch, grouped expert
// GEMMs, combine; core/strategies/moe_layer.hpp) is added to every plan but Hydraulis's replicas of
// several TP widths, whose plan would time its experts at balanced routing with no all-to-alls, silently.
// `run` and `plan` refuse those here, where a run starts; `validate` accepts them.
#include <string>

#include "core/common/error.hpp"
#include "core/config/scenario.hpp"

namespace zb::cli {

inline void refuse_unlowered_moe(const Scenario& scenario, const std::string& file) {
  if (!scenario.model.has_experts()) return;
  const std::string model = scenario.model.preset.empty() ? "the model" : "model " + scenario.model.preset;
  const std::string why = "the MoE layer is not lowered over replicas of different TP widths: " + model +
                          " has " + std::to_string(scenario.model.moe.experts) +
                          " experts, which such a plan would time at balanced routing without their "
                          "all-to-alls (issue 34)";
  for (std::size_t i = 0; i < scenario.systems.size(); ++i) {
    const SystemSpec& s = scenario.systems[i];
    if (s.name != "hydraulis" || s.options.value("groups", std::string("tensor")) == "context") continue;
    throw_input_error({file, "systems[" + std::to_string(i) + "].groups"},
                      "hydraulis plans model replicas of several tensor-parallel widths; " + why,
                      "set \"groups\": \"context\" for hydraulis on an MoE model (its assignment policy with "
                      "ring-CP groups), docs/MOE.md");
  }
}

}  // namespace zb::cli
