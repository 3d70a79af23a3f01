#pragma once
// Whether a micro-batch is worth remapping. The remap evens out linear work but costs an all-to-all-v of
// Q, K, V in and O out; across nodes on a narrow NIC (a800-4nic: 12.5 GB/s per GPU) it can cost more
// than it saves. So, per micro-batch, the partitioner is run twice — balancing attention only (then
// remap to a token-balanced layout) and balancing attention plus linear work (no remap) — and the
// cost model's forward estimate of each picks the layout. An improvement on the paper, which always
// remaps; docs/STRATEGIES.md.
#include <cstdint>
#include <vector>

#include "core/cost/cost_model.hpp"
#include "core/strategies/zeppelin/partitioner.hpp"

namespace zb::zeppelin {

struct LayoutChoice {
  Partition partition;
  bool remap = false;
  double with_remap_seconds = 0;     // estimate of the remapped layout (0 when not considered)
  double without_remap_seconds = 0;  // estimate of the layout balanced on attention + linear work
};

[[nodiscard]] LayoutChoice choose_layout(const std::vector<std::int64_t>& lengths, const CostModel& cost,
                                         PartitionOptions options, bool remap_allowed, int micro_batch);

// Per-rank attention shards of a partition (sequence id = index into `lengths`), as PlanBuilder lays them
// out.
[[nodiscard]] std::vector<std::vector<plan::Shard>> partition_shards(const std::vector<std::int64_t>& lengths,
                                                                     const Partition& partition,
                                                                     int world_size);

}  // namespace zb::zeppelin
