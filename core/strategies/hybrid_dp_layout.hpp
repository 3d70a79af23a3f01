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

// Which hybrid-dp (docs/STRATEGIES.md, "hybrid-dp"):
//   published  the paper's and ByteScale's: documents' work estimated by their FLOPs (from the lengths
//              alone), groups of a power of two GPUs at every size, aligned at multiples of their size;
//   oracle     work estimated by the cost model the simulator charges (kernel efficiency, call overheads),
//              groups beyond a node of any number of whole nodes. Zeppelin's planner weighs this one.
enum class HybridDpForm { published, oracle };

struct HybridDpSetup {
  std::string system;    // the plan's system label
  std::string strategy;  // the plan's strategy name
  Passes passes = Passes::fwd_bwd;
  HybridDpForm form = HybridDpForm::published;
};

[[nodiscard]] plan::Plan plan_hybrid_dp(const HybridDpSetup& setup, const CostModel& cost,
                                        const std::vector<std::int64_t>& lengths);

// A lower bound on that plan's predicted iteration time from its assignment alone (no plan, no
// prediction): the busiest rank's compute over the layers. Zeppelin skips the layout when the bound is
// already above its best estimate. 0 when a document fits no group.
[[nodiscard]] double hybrid_dp_compute_floor(const HybridDpSetup& setup, const CostModel& cost,
                                             const std::vector<std::int64_t>& lengths);
// A weaker bound under hybrid_dp_compute_floor, with no assignment: the costliest single document's share
// per rank of its group. Few cost-model calls, so the planner asks it first.
[[nodiscard]] double hybrid_dp_document_floor(const HybridDpSetup& setup, const CostModel& cost,
                                              const std::vector<std::int64_t>& lengths);

}  // namespace zb
