#pragma once
// Varlen blockwise attention backward: the CPU reference (FlashAttention-2 recurrence). It takes the same
// AttentionShape and AttentionBlockDesc as attention_forward (kernels/attention.hpp), so an executor
// calls it for exactly the blocks it ran forward.
//
// Layouts (row-major, rows are tokens), as in the forward:
//   Q, dQ         q_tokens  × heads    × head_dim
//   K, V, dK, dV  kv_tokens × kv_heads × head_dim   GQA: query head h reads kv head h / (heads / kv_heads)
//   O, dO         out_rows  × heads    × head_dim
//   LSE           out_rows  × heads
//
// One descriptor is one forward block: queries [q_row, q_row + q_count) against keys
// [kv_row, kv_row + kv_count), with the same absolute-position causal mask (key j is seen by query i iff
// kv_position + j ≤ q_position + i) or a full one; rows [out_row, out_row + q_count) of O, dO and LSE
// belong to its queries. Unlike the forward, O and LSE here are the FINAL forward results of those query
// rows (merged over every key block of the row, as merge_partials leaves them), because the softmax
// whose gradient is taken is over all the keys of the row, not over this block's. With them, each block
// needs only its own keys:
//   P_ij  = exp(scale · q_i·k_j − LSE_i)       the row's softmax probability of key j
//   D_i   = rowsum(dO_i ∘ O_i)                  = Σ_j P_ij (dO_i·v_j) over ALL the row's keys
//   dV_j += P_ij dO_i
//   dS_ij = P_ij (dO_i·v_j − D_i)
//   dQ_i += scale · dS_ij k_j,   dK_j += scale · dS_ij q_i
// Scale = 1/sqrt(head_dim). GQA: dK/dV of a kv head sum over the query heads of its group.
//
// Gradients ACCUMULATE (+=) into dQ (at the q rows), dK and dV (at the kv rows), so the partials of
// several blocks (ring steps over a query shard, query shards over a KV chunk, or several ranks) sum;
// zero the outputs before the first block. Blocks run one after the other in list order, so several
// blocks may name the same q, kv or out rows (that is how one call covers a ring of steps), and the
// result is deterministic for a given list. A key range may be any sub-range of the sequence, packed
// anywhere in K/V: only kv_position says where it sits.
//
// A query row that sees no key of the block contributes nothing. A row that sees keys must have a
// finite LSE; a row of the whole forward that saw no key (LSE = −inf) cannot see keys here, and such
// an inconsistent LSE is reported before anything is written (it means the LSE passed was not the one
// that covers this block's keys).
#include <span>
#include <string_view>

#include "kernels/attention.hpp"
#include "kernels/status.hpp"

namespace zb::kernels {

// The forward's checks minus "outputs must not overlap": the backward accumulates, so blocks may share
// rows. Both backends call it before touching memory.
Status validate_attention_backward(std::string_view entry, const AttentionShape& shape,
                                   std::span<const AttentionBlockDesc> blocks);

// Spans must hold exactly the elements the shape implies (dq like q, dk/dv like k/v, o/d_o like O,
// lse out_rows·heads); a mismatch is reported with the argument's name. Arithmetic and accumulation are
// in the element type: float32 (fast, the reference executor's) and float64.
Status attention_backward(const AttentionShape& shape, std::span<const AttentionBlockDesc> blocks,
                          std::span<const float> q, std::span<const float> k, std::span<const float> v,
                          std::span<const float> o, std::span<const float> d_o, std::span<const float> lse,
                          std::span<float> dq, std::span<float> dk, std::span<float> dv);
Status attention_backward(const AttentionShape& shape, std::span<const AttentionBlockDesc> blocks,
                          std::span<const double> q, std::span<const double> k, std::span<const double> v,
                          std::span<const double> o, std::span<const double> d_o, std::span<const double> lse,
                          std::span<double> dq, std::span<double> dk, std::span<double> dv);

}  // namespace zb::kernels
