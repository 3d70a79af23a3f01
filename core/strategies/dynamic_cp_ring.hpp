#pragma once
// The layer of one pack on one CP group, as the dynamic-group baselines (dynamic-cp, hydraulis) write it:
// QKV GEMM after the rank's previous work, the zigzag ring (a group of one: a local varlen call), then
// the output GEMMs. Direct routes, no remap: the baselines compare placement, not primitives.
#include <cstdint>
#include <vector>

#include "core/strategies/plan_builder.hpp"

namespace zb {

// Tokens one GPU of a ring of `p` holds of a document of `s`: zigzag pads to 2p; a GPU alone holds s.
[[nodiscard]] std::int64_t ring_share_tokens(std::int64_t s, int p);

// Ranks [first, first + size): local for one rank, intra-node when they share a node, else inter-node.
[[nodiscard]] plan::Level ring_level(int first, int size, int gpus_per_node);

// Adds group `ranks` holding `sequences` (micro-batch `mb`) and its layer; `last_op[rank]` is each rank's
// latest op (-1 = none) and becomes its last output GEMM.
void add_ring_layer(PlanBuilder& b, const std::vector<int>& ranks, std::vector<int> sequences, int mb,
                    std::vector<int>& last_op);

}  // namespace zb
