// ring-cp: TransformerEngine-style ring P2P context parallelism over ALL GPUs (CP = N, DP = 1).
// Documents are FFD-packed into packs of N·M tokens (M = per-GPU token capacity); every document of a
// pack is zigzag-sharded over all N ranks; packs run one after another. Inter-node hops use the sending
// GPU's own NIC (static affinity). See docs/STRATEGIES.md.
#include "core/strategies/packed_cp.hpp"
#include "core/strategies/registration.hpp"

namespace zb {
namespace {

class RingCp final : public Strategy {
 public:
  RingCp(const SystemSpec& system, const Scenario& scenario, const CostModel& cost)
      : setup_{system.label, system.name, scenario.cluster.world_size(), scenario.passes}, cost_(cost) {}

  plan::Plan make_plan(const Batch& batch) const override { return plan_packed_cp(setup_, cost_, batch.lengths); }

 private:
  PackedCpSetup setup_;
  const CostModel& cost_;
};

std::unique_ptr<Strategy> make_ring_cp(const SystemSpec& system, const Scenario& scenario, const CostModel& cost) {
  return std::make_unique<RingCp>(system, scenario, cost);
}

const StrategyRegistration registration{
    SystemInfo{
        .name = "ring-cp",
        .description =
            "Ring context parallelism over all GPUs (TransformerEngine-style P2P, per-document zigzag)",
        .order = 10,
        .baseline = true,
        .options = {},
        .validate = {},
    },
    make_ring_cp};

}  // namespace
}  // namespace zb
