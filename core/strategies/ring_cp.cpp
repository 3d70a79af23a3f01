// ring-cp: TransformerEngine-style ring P2P context parallelism, by default over ALL GPUs (CP = N,
// DP = 1); "degree": C gives TE CP of size C with N/C data-parallel groups (TE CP + DP). Documents are
// packed into packs of C·M tokens (M = per-GPU token capacity), balanced over the groups like uniform-cp;
// every document of a pack is zigzag-sharded over its C ranks; packs run one after another. Inter-node
// hops use the sending GPU's own NIC (static affinity). See docs/STRATEGIES.md.
#include "core/strategies/packed_cp.hpp"
#include "core/strategies/registration.hpp"

namespace zb {
namespace {

class RingCp final : public Strategy {
 public:
  RingCp(const SystemSpec& system, const Scenario& scenario, const CostModel& cost)
      : setup_{system.label, system.name, cost.cluster().world_size(), scenario.passes}, cost_(cost) {
    read_packed_cp_options(system, setup_);  // "auto" keeps all GPUs
  }

  plan::Plan make_plan(const Batch& batch) const override {
    return plan_packed_cp(setup_, cost_, batch.lengths);
  }

 private:
  PackedCpSetup setup_;
  const CostModel& cost_;
};

std::unique_ptr<Strategy> make_ring_cp(const SystemSpec& system, const Scenario& scenario,
                                       const CostModel& cost) {
  return std::make_unique<RingCp>(system, scenario, cost);
}

const StrategyRegistration registration{
    SystemInfo{
        .name = "ring-cp",
        .description = "Ring context parallelism (TransformerEngine-style P2P, per-document zigzag), over "
                       "all GPUs by default",
        .order = 10,
        .baseline = true,
        .options = {degree_system_option(
                        "TE CP size C, dividing the world size (N/C data-parallel groups); auto = all GPUs"),
                    dealing_system_option()},
        .validate = check_cp_degree,
        .label = {},
    },
    make_ring_cp};

}  // namespace
}  // namespace zb
