#pragma once
// One backward attention instruction on real numbers: the blocks of its plan op, exactly as the forward
// ran them (attention_op.hpp), through the CPU backward kernel (kernels/attention_backward.hpp). Inputs:
// Q, the saved forward O and LSE and the output gradient dO of the query rows from the rank's own rows
// (attention layout); K and V from its own rows or the buffers of the messages the instruction `reads`.
// Outputs accumulate (+=) into the rank's own rows: dQ at the query rows, and the dK/dV partials at the
// key rows, whoever owns them: a partial of another rank's keys waits there until the accumulator
// message for those keys (gradient_ops.hpp) carries it on. Gradients add in a fixed order (compute
// instructions in list order, blocks in op order), so their bits do not depend on message timing.
#include "core/exec/reference/rank_state.hpp"

namespace zb::reference {

// Runs backward attention instruction `id` of this rank and returns the FLOPs it computed (10 · pairs ·
// heads · head_dim: the backward's five matmuls, 2.5× the forward's two). Throws naming the instruction,
// the tensor, the sequence and the token when an input row is not on this rank.
double run_attention_backward(RankState& state, int id);

}  // namespace zb::reference
