#pragma once
// Forward attention FLOPs per rank of a plan: the one computation the run metrics' attention imbalance
// (docs/METRICS.md, "attention imbalance") and the planner's per-rank prediction
// (plan::Prediction::per_rank) both read.
#include <vector>

#include "core/cost/cost_model.hpp"
#include "core/plan/plan.hpp"

namespace zb::plan {

// Index = rank (plan.world_size entries): the forward FLOPs of one layer of the rank's attention ops, each
// op's causal or full pairs at its share of the model's heads.
[[nodiscard]] std::vector<double> attention_flops_per_rank(const Plan& plan, const CostModel& cost);

}  // namespace zb::plan
