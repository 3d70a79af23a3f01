#pragma once
// A Program sized again from its plan after the plan's sizes changed and its shape did not: what a run does
// to an MoE plan once the router has chosen (core/strategies/moe_layer.hpp, route_moe_layer), instead of
// lowering the plan a second time. The prediction lowered the plan at the planner's balanced routing; the
// router changes only sizes (the GEMMs' rows, the exchanges' parts, the TP collectives around the experts),
// so the Program's instructions, dependencies and messages stay, and this takes from the plan what the
// lowering takes from it for those sizes:
//   * every GEMM instruction, forward and backward: m, n, k, seconds (lower::gemm_seconds) and FLOPs;
//   * every collective instruction: its op's bytes (a remap's, out and in);
//   * every opaque collective (no messages, no CP group: tensor parallelism's): its bytes, the largest of
//     its members' plan ops, as the lowering takes them (the backward adjoint weighs the same);
//   * every MoE exchange message: its bytes and rows from its sender's op (`peer_bytes`, the part for its
//     receiver), the backward message the same as the forward one it reverses.
// Returns false, with the Program left in an unusable state, when the plan no longer has the Program's
// shape (a part that was empty at the prediction and is not now, or the reverse: an exchange's messages
// exist only for parts with bytes); the caller then lowers the plan again. The caller verifies the result
// as it verifies any Program (lower::verify).
#include "core/cost/cost_model.hpp"
#include "core/lower/program.hpp"
#include "core/plan/plan.hpp"

namespace zb::lower {

[[nodiscard]] bool resize(Program& program, const plan::Plan& plan, const CostModel& cost);

}  // namespace zb::lower
