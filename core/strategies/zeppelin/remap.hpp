#pragma once
// Zeppelin's remapping layer: from the attention layout (balanced on quadratic cost, uneven in tokens)
// to a token-balanced linear layout. Rank r's target is ⌈T/N⌉ for the first T mod N ranks and ⌊T/N⌋
// for the rest; surplus ranks send contiguous token ranges (cut from the end of their shards) to deficit
// ranks, inside the node first, and only what is left crosses nodes: a greedy min-cost transport plan
// under the cost order same-node < other-node.
#include <vector>

#include "core/plan/plan.hpp"

namespace zb::zeppelin {

struct RemapPlan {
  std::vector<std::vector<plan::Shard>> linear;  // per rank
  std::vector<plan::RemapMove> moves;            // attention → linear
};

[[nodiscard]] RemapPlan balance_tokens(const std::vector<std::vector<plan::Shard>>& attention,
                                       int gpus_per_node);

}  // namespace zb::zeppelin
