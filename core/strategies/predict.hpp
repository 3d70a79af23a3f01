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

// Sets plan.predicted, and plan.lowered as above (null for a plan that does not fit).
void predict(plan::Plan& plan, const CostModel& cost, Passes passes);

}  // namespace zb
