// The strategy wrapper that puts tensor parallelism under any strategy: the strategy plans on the
// TP-group grid with its own cost model, and each plan is expanded to the real GPUs.
#include "core/strategies/moe_layer.hpp"
#include "core/strategies/predict.hpp"
#include "core/strategies/tensor_parallel.hpp"

namespace zb {
namespace {

class TensorParallelStrategy final : public Strategy {
 public:
  TensorParallelStrategy(StrategyFactory factory, const SystemSpec& system, const Scenario& scenario,
                         const CostModel& cost)
      : cost_(cost),
        t_(scenario.parallelism.tensor),
        passes_(scenario.passes),
        grid_cost_(cost.with_cluster(tensor_parallel_grid(cost.cluster(), t_))
                       .with_planner_error(cost.planner_error())),
        inner_(factory(system, scenario, grid_cost_)) {}

  [[nodiscard]] plan::Plan make_plan(const Batch& batch) const override {
    plan::Plan grid = inner_->make_plan(batch);
    // The grid plan's Program served its prediction only: the expanded plan is lowered (and executed) on
    // its own, so the grid's is let go before that lowering instead of living through it.
    grid.lowered.reset();
    plan::Plan p = expand_tensor_parallel(grid, cost_, t_);
    // The grid plan's MoE layer (its prediction gave it one) sized for the members: each routes its share.
    if (p.feasible() && p.info.contains("moe_layer"))
      route_moe_layer(p, cost_, balanced_routing(p, cost_.model().moe));
    if (p.feasible()) predict(p, cost_, passes_);
    return p;
  }

 private:
  const CostModel& cost_;
  int t_;
  Passes passes_;
  CostModel grid_cost_;  // before inner_: the strategy keeps a reference to it
  std::unique_ptr<Strategy> inner_;
};

}  // namespace

std::unique_ptr<Strategy> make_tensor_parallel_strategy(StrategyFactory factory, const SystemSpec& system,
                                                        const Scenario& scenario, const CostModel& cost) {
  return std::make_unique<TensorParallelStrategy>(factory, system, scenario, cost);
}

std::int64_t tensor_parallel_token_capacity(const CostModel& cost, int t) {
  if (t <= 1) return cost.token_capacity_per_gpu();
  return cost.with_cluster(tensor_parallel_grid(cost.cluster(), t)).token_capacity_per_gpu();
}

}  // namespace zb
