#pragma once
// Hydraulis's default on an MoE model (issue 34). Its published system trains dense models on replicas of
// several tensor-parallel widths; no published system lays experts over such replicas (Megatron-Core's
// expert tensor parallelism is one width for the whole model, and the tool's MoE layer follows it: ETP =
// TP, docs/MOE.md), and the tool does not invent a layout and call it Hydraulis's. `run` and `plan` refuse
// the combination here, where a run starts, naming the reading that runs: Hydraulis's assignment policy
// with ring-CP groups ("groups": "context"). `validate` accepts it.
#include <string>

#include "core/common/error.hpp"
#include "core/config/scenario.hpp"

namespace zb::cli {

inline void refuse_hydraulis_replicas_with_experts(const Scenario& scenario, const std::string& file) {
  if (!scenario.model.has_experts()) return;
  const std::string model = scenario.model.preset.empty() ? "the model" : "model " + scenario.model.preset;
  const std::string why = model + " has " + std::to_string(scenario.model.moe.experts) +
                          " experts, and no published system lays experts over replicas of different TP "
                          "widths (Megatron-Core's expert TP is one width for the whole model)";
  for (std::size_t i = 0; i < scenario.systems.size(); ++i) {
    const SystemSpec& s = scenario.systems[i];
    if (s.name != "hydraulis" || s.options.value("groups", std::string("tensor")) == "context") continue;
    throw_input_error(
        {file, "systems[" + std::to_string(i) + "].groups"},
        "hydraulis plans model replicas of several tensor-parallel widths, a layout Hydraulis publishes for "
        "dense models: " +
            why,
        "set \"groups\": \"context\" for hydraulis on an MoE model: its two-stage assignment "
        "policy with ring-CP groups (docs/MOE.md, docs/STRATEGIES.md)");
  }
}

}  // namespace zb::cli
