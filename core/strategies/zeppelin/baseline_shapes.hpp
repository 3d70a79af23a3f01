#pragma once
// The baseline-shaped layouts Zeppelin's planner also plans (option "baseline_shapes"), so that by its own
// estimate it is never slower than a fixed-degree baseline on the same batch. A packed-CP layout (fixed CP
// groups, documents dealt by cost, zigzag rings; core/strategies/packed_cp.hpp) is one the attention
// engine runs as it is: every group one ring, no remap.
#include <cstdint>
#include <vector>

#include "core/cost/cost_model.hpp"

namespace zb::zeppelin {

// The CP degrees worth planning, ascending: every divisor of the world size up to one node (rings on
// NVLink, and pure data parallelism at 1), and the narrowest divisor whose groups hold the longest
// document when that is wider than a node. Wider cross-node rings are left out: a ring over more nodes
// than memory needs moves every document's KV over the NICs, which the hierarchical partition already
// beats by keeping short documents off them, and planning one costs O(degree²) instructions per document.
[[nodiscard]] std::vector<int> baseline_shape_degrees(const CostModel& cost,
                                                      const std::vector<std::int64_t>& lengths);

}  // namespace zb::zeppelin
