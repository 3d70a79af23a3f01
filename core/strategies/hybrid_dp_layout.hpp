#pragma once
// The hybrid-dp baseline's layout (the Zeppelin paper's Hybrid DP, ByteScale HDP): documents that fit a
// GPU run there whole, longer ones on the smallest ring that holds them, FLOP-based assignment. Planned
// by the hybrid-dp strategy and, as a candidate, by Zeppelin's. Semantics: docs/STRATEGIES.md.
#include <cstdint>
#include <string>
#include <vector>

#include "core/config/scenario.hpp"
#include "core/cost/cost_model.hpp"
#include "core/plan/plan.hpp"

namespace zb {

struct HybridDpSetup {
  std::string system;    // the plan's system label
  std::string strategy;  // the plan's strategy name
  Passes passes = Passes::fwd_bwd;
};

[[nodiscard]] plan::Plan plan_hybrid_dp(const HybridDpSetup& setup, const CostModel& cost,
                                        const std::vector<std::int64_t>& lengths);

}  // namespace zb
