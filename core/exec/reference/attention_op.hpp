#pragma once
// One attention instruction on real numbers: every block of it (lower::attention_blocks) is
// packed into one call of the CPU kernel (core/exec/block_packing.hpp), and each block's partial (O, LSE) is
// LSE-merged into the rank's output rows in block order. A head-parallel op (Ulysses, USP: its blocks carry a
// head range) computes only those heads and writes only their columns of O and LSE. Merging in a fixed order
// (compute instructions in list order, blocks in op order) makes the result the same bit for bit whatever the
// message timing, in one process or under MPI.
#include <vector>

#include "core/exec/reference/rank_state.hpp"
#include "kernels/attention.hpp"

namespace zb::reference {

// The packed inputs of one attention instruction (forward or backward): its plan op's blocks, one kernel
// descriptor per block (queries and keys packed block after block), Q from the rank's own rows, K and V
// from its own rows or the buffers of the messages the instruction `reads`.
struct PackedAttention {
  std::vector<layout::AttentionBlock> blocks;
  // The heads it computes (a head-parallel op's slice, else every head); q, k, v, and the kernel's shape,
  // hold only those heads' columns.
  HeadColumns heads;
  kernels::AttentionShape shape;
  std::vector<kernels::AttentionBlockDesc> descs;
  std::vector<float> q, k, v;
  double pairs = 0;  // (query, key) pairs the blocks compute
};

// Throws naming the instruction, the sequence and the token when a query row is not on this rank or a
// key row is in none of its sources, or when the instruction lowers no attention op of this rank (or its
// blocks carry different head ranges).
[[nodiscard]] PackedAttention pack_attention(const RankState& state, int id);

// "rank 2 instr 9 (...): <what>", thrown as a runtime zb::Error on the state's rank.
[[noreturn]] void fail_instr(const RankState& state, int id, const std::string& what);

// Runs attention instruction `id` of this rank and returns the FLOPs it computed (4 · pairs · heads ·
// head_dim, the forward matmuls). Q comes from the rank's own rows; K and V from its own rows or from
// the buffers of the messages the instruction `reads` (complete by then). Throws naming the instruction,
// the sequence and the token when a query row is not on this rank or a key row is in none of those.
double run_attention(RankState& state, int id);

}  // namespace zb::reference
