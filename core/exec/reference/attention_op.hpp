#pragma once
// One attention instruction on real numbers: every block of its plan op (plan::expand_blocks) is
// packed into one call of the CPU kernel, and each block's partial (O, LSE) is LSE-merged into the rank's
// output rows in block order. Merging in a fixed order (compute instructions in list order, blocks in op
// order) makes the result the same bit for bit whatever the message timing, in one process or under MPI.
#include "core/exec/reference/rank_state.hpp"

namespace zb::reference {

// Runs attention instruction `id` of this rank and returns the FLOPs it computed (4 · pairs · heads ·
// head_dim, the forward matmuls). Q comes from the rank's own rows; K and V from its own rows or from
// the buffers of the messages the instruction `reads` (complete by then). Throws naming the instruction,
// the sequence and the token when a query row is not on this rank or a key row is in none of those.
double run_attention(RankState& state, int id);

}  // namespace zb::reference
