#pragma once
// The dynamic-cp baseline's scheduler: Megatron-Core's balanced hybrid-CP schedule
// (megatron/core/pipeline_parallel/hybrid_cp_schedule.py, BalancedCPScheduler), re-stated on batch
// indices. Each document gets a CP size, the next power of two of ⌈s / max_seqlen_per_rank⌉; documents,
// longest first, are placed round by round on groups of consecutive GPUs, each round ending in a barrier
// so that CP sizes can change between rounds. Semantics and deviations: docs/STRATEGIES.md "dynamic-cp".
#include <cstdint>
#include <vector>

namespace zb {

// One CP group of a round: GPUs [first_rank, first_rank + size), running `docs` one after another, each
// document zigzag-sharded over all `size` GPUs as its own micro-batch.
struct DynamicCpGroup {
  int first_rank = 0;
  int size = 0;
  std::vector<int> docs;  // batch indices, in execution order
  double load = 0;        // Megatron's workload estimate, Σ s²/cp_size(s), per GPU of the group
};

// The groups of one round tile the GPUs [0, world) in order (fill_empty_gpus leaves no GPU idle).
struct DynamicCpRound {
  std::vector<DynamicCpGroup> groups;
};

// Megatron's `gpus_needed`: the smallest power of two ≥ ⌈s / max_seqlen_per_rank⌉, at least 1.
[[nodiscard]] int dynamic_cp_size(std::int64_t length, std::int64_t max_seqlen_per_rank);

// The whole schedule of one batch. Every document's CP size must be ≤ world (the caller reports longer
// documents as an OOM first); then the schedule terminates, each round placing at least one document.
[[nodiscard]] std::vector<DynamicCpRound> schedule_dynamic_cp(const std::vector<std::int64_t>& lengths,
                                                              std::int64_t max_seqlen_per_rank, int world);

}  // namespace zb
