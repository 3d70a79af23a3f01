// The strategy wrapper that gives an MoE model its MoE layer under any strategy: the strategy plans the
// model as a dense one at balanced routing (all it may know before the router runs), and each feasible
// plan gets the MoE layer of core/strategies/moe_layer.hpp, sized by the balanced routing, and is
// predicted again with its dispatch and combine.
#include "core/strategies/moe_layer.hpp"
#include "core/strategies/predict.hpp"
#include "core/strategies/strategy.hpp"

namespace zb {
namespace {

class MoeLayerStrategy final : public Strategy {
 public:
  MoeLayerStrategy(std::unique_ptr<Strategy> inner, const Scenario& scenario, const CostModel& cost)
      : inner_(std::move(inner)), moe_(scenario.model.moe), passes_(scenario.passes), cost_(cost) {}

  [[nodiscard]] plan::Plan make_plan(const Batch& batch) const override {
    plan::Plan dense = inner_->make_plan(batch);
    if (!dense.feasible() || splits_gemms(dense)) return dense;
    dense.lowered.reset();  // its Program served the dense prediction only
    const MoeRouting balanced = balanced_routing(dense, moe_);
    plan::Plan p = add_moe_layer(std::move(dense), cost_, balanced);
    predict(p, cost_, passes_);
    return p;
  }

 private:
  std::unique_ptr<Strategy> inner_;
  MoeSpec moe_;
  Passes passes_;
  const CostModel& cost_;
};

}  // namespace

std::unique_ptr<Strategy> make_moe_layer_strategy(std::unique_ptr<Strategy> inner, const Scenario& scenario,
                                                  const CostModel& cost) {
  return std::make_unique<MoeLayerStrategy>(std::move(inner), scenario, cost);
}

}  // namespace zb
