#pragma once
// Lining Zeppelin's rings up across micro-batches (docs/STRATEGIES.md, zeppelin step 4). Without the
// remap nothing joins the GPUs between micro-batches, but a ring starts only when all its members reach
// it: a member whose earlier micro-batches hold less work than its partners' waits. So the local
// sequences are dealt to micro-batches again, rank by rank: walking the micro-batches in order, a ring's
// members that would reach it early get local sequences (the longest that fit the gap and their memory)
// in earlier micro-batches; the rest go to the rank's micro-batches from its last ring on, the roomiest
// first. When that leaves a sequence no room, the first dealing (which fitted) is kept.
#include <cstdint>
#include <functional>
#include <vector>

#include "core/strategies/zeppelin/partitioner.hpp"

namespace zb::zeppelin {

// `local[mb·N + r]` holds rank r's local documents of micro-batch mb; `tokens` and `bin_load` are
// [micro-batch][rank]; `ring_seconds(s, p)` is a member's estimated share of a ring of p over s tokens.
void align_ring_starts(const std::vector<std::int64_t>& lengths, const std::vector<double>& local_cost,
                       int world, std::int64_t capacity, const std::vector<GroupAssignment>& inter,
                       const std::vector<GroupAssignment>& intra, std::vector<std::vector<int>>& local,
                       std::vector<std::vector<std::int64_t>>& tokens,
                       std::vector<std::vector<double>>& bin_load,
                       const std::function<double(std::int64_t, int)>& ring_seconds);

}  // namespace zb::zeppelin
