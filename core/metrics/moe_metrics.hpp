#pragma once
// The MoE figures of a run (docs/METRICS.md, "The MoE layer"): the router's load imbalance in the
// representative layer (recorded in the plan's info by core/strategies/moe_layer.cpp when a run routed it),
// the bytes its dispatches move and the part of them that crosses nodes, and the share of the critical
// rank's layer time spent in the MoE layer. A plan without an MoE layer leaves them 0 (not recorded).
#include "core/exec/trace.hpp"
#include "core/metrics/metrics.hpp"
#include "core/plan/plan.hpp"

namespace zb {

// Fills the MoE fields of `m` (its critical_rank already set) from `plan` and `trace`; `layers` multiplies
// one layer's dispatch bytes into the iteration's.
void fill_moe_metrics(RunMetrics& m, const plan::Plan& plan, const Trace& trace, int layers);

// Whether a trace or plan op name (its first word: "expert_up dgrad", "dispatch bwd") is one of the MoE
// layer's instructions.
[[nodiscard]] bool is_moe_instruction(std::string_view name);

}  // namespace zb
