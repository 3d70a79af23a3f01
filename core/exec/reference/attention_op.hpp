#pragma once
// One attention op of the plan on real numbers: every block of the op (plan::expand_blocks) is packed
// into one call of the CPU kernel, and each block's partial (O, LSE) is LSE-merged into the rank's
// output rows in block order. Merging in a fixed order (ops in list order, blocks in op order) makes
// the result the same bit for bit whatever the message timing, in one process or under MPI.
#include "core/exec/reference/rank_state.hpp"

namespace zb::reference {

// Runs the op and returns the FLOPs it computed (4 · pairs · heads · head_dim, the forward matmuls).
// Throws naming the rank, the op, the sequence and the token when a query row is not on this rank or a
// key row is neither its own nor brought by a recv the op depends on.
double run_attention_op(RankState& state, const plan::Op& op);

}  // namespace zb::reference
