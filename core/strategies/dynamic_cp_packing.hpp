#pragma once
// The dynamic-cp scheduler as Megatron-LM's `dev` branch runs it: DefaultDynamicCPScheduler
// (megatron/core/datasets/data_schedule.py) calling next_hdp_group_packing_aware
// (megatron/core/datasets/data_schedule_utils.py) once per micro-batch, re-stated on batch indices. Unlike
// the older BalancedCPScheduler (dynamic_cp_schedule.hpp), every micro-batch spans all DP×CP GPUs, a CP
// group packs all of its documents into one THD micro-batch, and every GPU runs the same number of
// micro-batches, so no barrier is needed between them.
#include <cstdint>
#include <vector>

namespace zb {

// One CP group of one micro-batch: GPUs [first_rank, first_rank + size), all `docs` packed into one THD
// micro-batch, each document zigzag-sharded over the whole group.
struct DynamicCpPackedGroup {
  int first_rank = 0;
  int size = 0;
  std::vector<int> docs;             // batch indices, in placement order
  double load = 0;                   // Megatron's workload, Σ s²/size, per GPU of the group
  std::int64_t tokens_per_rank = 0;  // ⌈Σ padded s / size⌉ (zigzag padding to 2·size): the token test's share
};

struct DynamicCpMicroBatch {
  std::vector<DynamicCpPackedGroup> groups;  // in rank order, tiling [0, world) with no idle GPU
};

// Megatron's `dcp_gpus_needed`: the smallest power of two ≥ ⌈s / max_seqlen_per_rank⌉, at least
// min_cp_size (itself rounded up to a power of two, see the .cpp).
[[nodiscard]] int dynamic_cp_min_size(std::int64_t length, std::int64_t max_seqlen_per_rank,
                                      int min_cp_size = 1);

// The whole schedule of one batch, Megatron dev's DefaultDynamicCPScheduler: documents longest first, one
// micro-batch per call of the packing-aware grouping, leftovers carried to the next micro-batch. Every
// document's minimum CP size must be ≤ the largest power of two ≤ world (the caller reports others as OOM
// first); std::invalid_argument otherwise. The token test counts each document zigzag-padded to its group
// (pad(s, 2·size)), the rows its GPUs hold.
[[nodiscard]] std::vector<DynamicCpMicroBatch> schedule_dynamic_cp_packed(
    const std::vector<std::int64_t>& lengths, std::int64_t max_seqlen_per_rank, int world,
    int min_cp_size = 1);

}  // namespace zb
