#include "core/exec/reference/attention_backward_op.hpp"

#include <algorithm>

#include "core/exec/reference/attention_op.hpp"
#include "core/exec/reference/gradient_ops.hpp"
#include "kernels/attention_backward.hpp"

namespace zb::reference {

double run_attention_backward(RankState& state, int id) {
  const PackedAttention p = pack_attention(state, id);
  const AttentionDims& d = state.dims;
  // Only the heads the instruction computes (a head-parallel op's slice, else every head).
  const auto heads = static_cast<std::size_t>(p.shape.heads);
  const auto q_width = heads * static_cast<std::size_t>(d.head_dim);
  const auto kv_width = static_cast<std::size_t>(p.shape.kv_heads) * static_cast<std::size_t>(d.head_dim);
  const auto [q_first, q_last] = column_span(p.heads, lower::Tensor::Q, d.head_dim);
  const auto [kv_first, kv_last] = column_span(p.heads, lower::Tensor::K, d.head_dim);
  const auto lse_first = static_cast<std::size_t>(p.heads.q_begin),
             lse_last = static_cast<std::size_t>(p.heads.q_end);
  std::vector<float> o(p.q.size()), d_o(p.q.size()), lse(static_cast<std::size_t>(p.shape.out_rows) * heads);
  // The saved activations of the forward (O merged over every key block of the row, and its LSE) and the
  // gradient that came back to the attention layout; out rows are the packed query rows.
  for (std::size_t i = 0; i < p.blocks.size(); ++i) {
    const layout::AttentionBlock& b = p.blocks[i];
    if (b.q1 <= b.q0) continue;
    const auto first = static_cast<std::size_t>(p.descs[i].out_row);
    const struct {
      const RowStore& store;
      std::vector<float>& into;
      std::size_t width, first, last;  // packed row width; the columns taken from the store's rows
      const char* what;
    } inputs[] = {{state.own.of(lower::Tensor::O), o, q_width, q_first, q_last, "saved forward output O"},
                  {state.lse, lse, heads, lse_first, lse_last, "saved forward LSE"},
                  {state.own.of(lower::Tensor::dO), d_o, q_width, q_first, q_last, "output gradient dO"}};
    for (const auto& in : inputs) {
      if (const auto missing = in.store.first_missing(b.seq, b.q0, b.q1)) {
        fail_instr(
            state, id,
            std::string("the ") + in.what + " row of sequence " + std::to_string(b.seq) + " token " +
                std::to_string(*missing) +
                " is not on this rank (its forward did not compute it here, or the inverse remap did not "
                "bring its gradient)");
      }
      take_columns(in.store.rows(b.seq, b.q0, b.q1), static_cast<std::size_t>(in.store.width()), in.first,
                   in.last,
                   std::span<float>(in.into).subspan(first * in.width,
                                                     static_cast<std::size_t>(b.q1 - b.q0) * in.width));
    }
  }
  std::vector<float> dq(p.q.size(), 0.0F), dk(p.k.size(), 0.0F), dv(p.v.size(), 0.0F);
  kernels::throw_if_error(
      kernels::attention_backward(p.shape, p.descs, p.q, p.k, p.v, o, d_o, lse, dq, dk, dv), state.where(id));
  for (std::size_t i = 0; i < p.blocks.size(); ++i) {
    const layout::AttentionBlock& b = p.blocks[i];
    const kernels::AttentionBlockDesc& desc = p.descs[i];
    put_columns(state.own.of(lower::Tensor::dQ), b.seq, b.q0, b.q1, q_first, q_last,
                std::span<const float>(dq).subspan(static_cast<std::size_t>(desc.q_row) * q_width,
                                                   static_cast<std::size_t>(desc.q_count) * q_width),
                true);
    for (const auto& [tensor, from] :
         {std::pair{lower::Tensor::dK, &dk}, std::pair{lower::Tensor::dV, &dv}}) {
      put_columns(state.own.of(tensor), b.seq, b.k0, b.k1, kv_first, kv_last,
                  std::span<const float>(*from).subspan(static_cast<std::size_t>(desc.kv_row) * kv_width,
                                                        static_cast<std::size_t>(desc.kv_count) * kv_width),
                  true);
    }
  }
  return 10.0 * p.pairs * p.shape.heads * d.head_dim;
}

}  // namespace zb::reference
