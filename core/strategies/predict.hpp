#pragma once
// The planner's own estimate of a plan's time: the plan lowered to its Program (core/lower) and the
// Program's contention-free schedule at nominal link rates (core/lower/estimate.hpp). The simulator runs
// the same Program with bandwidth sharing; the ratio of the two is the planner's cost-model error.
// The Program is kept in the plan (`plan.lowered`), so a run executes it without lowering again, unless
// `cost` carries a planner error (its compute times are then not what executors charge).
#include "core/config/scenario.hpp"
#include "core/cost/cost_model.hpp"
#include "core/plan/plan.hpp"

namespace zb {

// Sets plan.predicted, and plan.lowered as above (null for a plan that does not fit). A plan of an MoE
// model gets its MoE layer first, at balanced routing (give_moe_layer, core/strategies/moe_layer.hpp).
void predict(plan::Plan& plan, const CostModel& cost, Passes passes);

// A lower bound of the iteration_seconds predict() would set, from the plan's ops alone (no lowering, no
// schedule: O(ops)), for a planner to skip a candidate that cannot beat its best plan so far. Each rank's
// compute stream runs its compute instructions one at a time, and the backward pass starts after the
// barrier, so one layer's forward makespan is at least the largest Σ over a rank's forward compute and
// its backward makespan the largest Σ over its backward compute (lower::compute_seconds, the durations
// lowering gives them). The parts outside the layers are at least the slowest rank's embedding and LM
// head and the optimizer step (the exposed gradient sync is ≥ 0):
//   floor = (max_r F_r + max_r B_r) · layers + embedding_and_head_critical + optimizer ≤ predicted.
// 0 for a plan that does not fit.
[[nodiscard]] double predicted_floor(const plan::Plan& plan, const CostModel& cost, Passes passes);

}  // namespace zb
