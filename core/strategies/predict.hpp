#pragma once
// The planner's own estimate of a plan's time: a contention-free list schedule of the op DAG with the
// cost model's durations (compute ops in list order on one stream per rank, transfers at their link's
// nominal rate, no sharing). The simulator then runs the same plan with contention; the ratio of the two
// is the planner's cost-model error that reports print.
#include "core/config/scenario.hpp"
#include "core/cost/cost_model.hpp"
#include "core/plan/plan.hpp"

namespace zb {

// Per-op duration in seconds under the cost model, forward pass (backward: scaled by the profile's
// backward factors; transfers carry K,V forward and dK,dV backward, so twice the bytes).
[[nodiscard]] double op_seconds(const plan::Plan& plan, int rank, const plan::Op& op, const CostModel& cost,
                                bool backward);

// Makespan of one layer (forward or backward) and each rank's finish time.
struct LayerEstimate {
  double makespan = 0;
  std::vector<double> rank_finish;
};
[[nodiscard]] LayerEstimate estimate_layer(const plan::Plan& plan, const CostModel& cost, bool backward);

[[nodiscard]] plan::Prediction predict(const plan::Plan& plan, const CostModel& cost, Passes passes);

}  // namespace zb
