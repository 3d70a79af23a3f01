// packing-dp: plain data parallelism with sequence packing, no context parallelism (related-systems.md
// §5 B0). Every document runs whole on one GPU: documents are dealt to the N GPUs (by estimated cost,
// LPT, or FFD packs round-robin with "dealing": "round-robin") and FFD-packed per GPU into packs of the
// GPU's token capacity M, run one after another as micro-batches. A document longer than M is an OOM
// naming it, never split. The plan is uniform-cp's at degree 1 (the shared packed-CP engine), so the two
// stay identical by construction; this entry exists so reports name the DP-only baseline as such.
#include <string>

#include "core/strategies/packed_cp.hpp"
#include "core/strategies/plan_builder.hpp"
#include "core/strategies/registration.hpp"

namespace zb {
namespace {

class PackingDp final : public Strategy {
 public:
  PackingDp(const SystemSpec& system, const Scenario& scenario, const CostModel& cost)
      : setup_{system.label, system.name, 1, scenario.passes}, cost_(cost) {
    setup_.dealing = system.options.at("dealing").get<std::string>() == "round-robin" ? Dealing::round_robin
                                                                                      : Dealing::balanced;
  }

  plan::Plan make_plan(const Batch& batch) const override {
    // Checked here rather than left to the engine so the report names the document itself (its batch
    // index and unpadded length) against the capacity: the one fact a user needs to act on.
    const std::int64_t capacity = cost_.token_capacity_per_gpu();
    for (std::size_t d = 0; d < batch.lengths.size(); ++d) {
      if (batch.lengths[d] <= capacity) continue;
      plan::Plan p = oom_plan(cost_, setup_.system, setup_.strategy, batch.lengths,
                              {{0, 0, batch.lengths[d], capacity}});
      p.info["oversized_document"] = {
          {"index", d}, {"length", batch.lengths[d]}, {"capacity_tokens", capacity}};
      p.info["degree"] = 1;
      return p;
    }
    return plan_packed_cp(setup_, cost_, batch.lengths);
  }

 private:
  PackedCpSetup setup_;
  const CostModel& cost_;
};

std::unique_ptr<Strategy> make_packing_dp(const SystemSpec& system, const Scenario& scenario,
                                          const CostModel& cost) {
  return std::make_unique<PackingDp>(system, scenario, cost);
}

const StrategyRegistration registration{
    SystemInfo{
        .name = "packing-dp",
        .description =
            "Packing-only data parallelism (no CP): whole documents per GPU, FFD packs of its memory; "
            "a document longer than a GPU holds is an OOM",
        .order = 30,
        .baseline = true,
        .options = {dealing_system_option()},
        .validate = {},
        .label = {},
    },
    make_packing_dp};

}  // namespace
}  // namespace zb
