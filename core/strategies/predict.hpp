#pragma once
// The planner's own estimate of a plan's time: the plan lowered to its Program (core/lower) and the
// Program's contention-free schedule at nominal link rates (core/lower/estimate.hpp). The simulator runs
// the same Program with bandwidth sharing; the ratio of the two is the planner's cost-model error.
#include "core/config/scenario.hpp"
#include "core/cost/cost_model.hpp"
#include "core/plan/plan.hpp"

namespace zb {

[[nodiscard]] plan::Prediction predict(const plan::Plan& plan, const CostModel& cost, Passes passes);

}  // namespace zb
