#pragma once
// The shared engine of the fixed-degree baselines (ring-cp, uniform-cp): fixed CP groups of consecutive
// ranks, FFD packs dealt round-robin to the groups, each group running its packs one after another as
// micro-batches, every document zigzag-sharded over its group (TransformerEngine THD semantics), ring
// P2P attention with direct routes (static GPU→NIC affinity), no remap.
#include <string>
#include <vector>

#include "core/config/scenario.hpp"
#include "core/cost/cost_model.hpp"
#include "core/plan/plan.hpp"

namespace zb {

struct PackedCpSetup {
  std::string system;
  std::string strategy;
  int degree = 1;  // ranks per group; must divide the world size
  Passes passes = Passes::fwd_bwd;
};

[[nodiscard]] plan::Plan plan_packed_cp(const PackedCpSetup& setup, const CostModel& cost,
                                        const std::vector<std::int64_t>& lengths);

}  // namespace zb
