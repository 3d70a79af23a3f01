// hybrid-dp: the Zeppelin paper's Hybrid DP baseline, ByteScale's Hybrid Data Parallelism (HDP). Each
// document gets only as many GPUs as its memory needs: one that fits a GPU runs there whole (data
// parallel, local attention, no CP traffic); a longer one gets the smallest zigzag ring that holds it
// (the smallest power of two ≥ ⌈s/M⌉ GPUs). Assignment is FLOP-based: documents, costliest first, go to
// the GPU or group of consecutive GPUs of their size with the least estimated load so far, into the first
// micro-batch where those GPUs have room; a micro-batch partitions the GPUs into groups, so rings of
// different sizes never share a GPU at once. "form": "oracle" keeps the idealised variant that estimates
// with the simulator's own cost model. See docs/STRATEGIES.md "hybrid-dp".
#include "core/strategies/hybrid_dp_layout.hpp"
#include "core/strategies/registration.hpp"

namespace zb {
namespace {

class HybridDp final : public Strategy {
 public:
  HybridDp(const SystemSpec& system, const Scenario& scenario, const CostModel& cost)
      : setup_{system.label, system.name, scenario.passes,
               system.options.at("form") == "oracle" ? HybridDpForm::oracle : HybridDpForm::published},
        cost_(cost) {}

  plan::Plan make_plan(const Batch& batch) const override {
    return plan_hybrid_dp(setup_, cost_, batch.lengths);
  }

 private:
  HybridDpSetup setup_;
  const CostModel& cost_;
};

std::unique_ptr<Strategy> make_hybrid_dp(const SystemSpec& system, const Scenario& scenario,
                                         const CostModel& cost) {
  return std::make_unique<HybridDp>(system, scenario, cost);
}

const StrategyRegistration registration{
    SystemInfo{
        .name = "hybrid-dp",
        .description =
            "Hybrid DP (ByteScale HDP): documents that fit a GPU run data-parallel, longer ones the "
            "smallest ring that holds them; FLOP-based assignment to the least-loaded GPUs",
        .order = 40,
        .baseline = true,
        .options = {SystemOption{
            .name = "form",
            .type = OptionType::choice,
            .default_value = "published",
            .choices = {"published", "oracle"},
            .description = "published: work estimated by FLOPs from the lengths, power-of-two groups (the "
                           "paper's and ByteScale's); oracle: work estimated by the simulator's own cost "
                           "model, groups of whole nodes beyond a node (idealised)"}},
        .validate = {},
        .label = {},
    },
    make_hybrid_dp};

}  // namespace
}  // namespace zb
