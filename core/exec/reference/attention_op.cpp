#include "core/exec/reference/attention_op.hpp"

#include <algorithm>
#include <limits>
#include <optional>

#include "core/exec/block_packing.hpp"
#include "core/exec/reference/rank_location.hpp"

namespace zb::reference {
namespace {

// Causal pairs of a block: queries [q0, q1) against keys [k0, k1) with k ≤ q.
double causal_pairs(const layout::AttentionBlock& b) {
  double pairs = 0;
  for (std::int64_t q = b.q0; q < b.q1; ++q)
    pairs += static_cast<double>(std::clamp<std::int64_t>(q + 1 - b.k0, 0, b.k1 - b.k0));
  return pairs;
}

// The heads instruction `id` computes: its blocks' head range (a block without one has its op's, as the
// zigzag form and USP's ring steps carry it), the same for every block, as the reference's heads.
HeadColumns instruction_heads(const RankState& state, int id, const lower::Instr& instr,
                              const std::vector<layout::AttentionBlock>& blocks) {
  std::optional<layout::HeadRange> range;
  for (const layout::AttentionBlock& b : blocks) {
    const layout::HeadRange r = b.heads.all() ? instr.heads : b.heads;
    if (range && (range->begin != r.begin || range->end != r.end)) {
      fail_instr(state, id,
                 "its blocks compute different head ranges (" + state.in.heads.describe(*range) + " and " +
                     state.in.heads.describe(r) +
                     "); the reference runs one head range per attention instruction");
    }
    range = r;
  }
  const std::optional<HeadColumns> cols = state.in.heads.columns(range.value_or(instr.heads));
  if (!cols)
    fail_instr(state, id,
               "computes " + state.in.heads.describe(range.value_or(instr.heads)) +
                   ", which are no whole heads of the reference's");
  return *cols;
}

}  // namespace

void fail_instr(const RankState& state, int id, const std::string& what) {
  throw Error(ExitCode::runtime, rank_location(state.rank), state.where(id) + ": " + what);
}

PackedAttention pack_attention(const RankState& state, int id) {
  const lower::Instr& instr = state.instr(id);
  if (instr.kind != lower::InstrKind::attention) fail_instr(state, id, "it is not an attention instruction");
  PackedAttention p;
  p.blocks = lower::attention_blocks(state.in.program, state.rank, instr);
  const std::vector<layout::AttentionBlock>& blocks = p.blocks;
  p.heads = instruction_heads(state, id, instr, blocks);
  const AttentionDims& d = state.dims;
  const auto q_width = static_cast<std::size_t>(p.heads.q_count() * d.head_dim);
  const auto kv_width = static_cast<std::size_t>(p.heads.kv_count() * d.head_dim);

  kernels::AttentionShape& shape = p.shape;
  shape = {p.heads.q_count(), p.heads.kv_count(), d.head_dim, 0, 0, 0};
  p.descs = pack_block_descs(blocks, shape);
  const std::vector<kernels::AttentionBlockDesc>& descs = p.descs;
  for (const auto& b : blocks)
    p.pairs +=
        b.mask == layout::Mask::causal ? causal_pairs(b) : static_cast<double>((b.q1 - b.q0) * (b.k1 - b.k0));

  // Pack the inputs: Q from the rank's own rows (queries never travel), K and V from own rows or from
  // the buffers of the messages the instruction reads, in the order it lists them.
  std::vector<float>& q = p.q;
  std::vector<float>& k = p.k;
  std::vector<float>& v = p.v;
  q.resize(static_cast<std::size_t>(shape.q_tokens) * q_width);
  k.resize(static_cast<std::size_t>(shape.kv_tokens) * kv_width);
  v.resize(k.size());
  const std::vector<const TensorRows*> sources = state.sources(id);
  const RowStore& own_q = state.own.of(lower::Tensor::Q);
  const auto [q_first, q_last] = column_span(p.heads, lower::Tensor::Q, d.head_dim);
  const auto [kv_first, kv_last] = column_span(p.heads, lower::Tensor::K, d.head_dim);
  std::vector<float> full;  // rows of every head, before their columns are taken
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const auto& b = blocks[i];
    const auto& desc = descs[i];
    if (const auto missing = own_q.first_missing(b.seq, b.q0, b.q1)) {
      fail_instr(state, id,
                 "the query row of sequence " + std::to_string(b.seq) + " token " + std::to_string(*missing) +
                     " is not on this rank (the attention layout does not give it this token)");
    }
    take_columns(own_q.rows(b.seq, b.q0, b.q1), static_cast<std::size_t>(d.q_width()), q_first, q_last,
                 std::span<float>(q).subspan(static_cast<std::size_t>(desc.q_row) * q_width,
                                             static_cast<std::size_t>(desc.q_count) * q_width));
    for (const auto& [tensor, into] : {std::pair{lower::Tensor::K, &k}, std::pair{lower::Tensor::V, &v}}) {
      const auto rows = std::span<float>(*into).subspan(static_cast<std::size_t>(desc.kv_row) * kv_width,
                                                        static_cast<std::size_t>(desc.kv_count) * kv_width);
      full.resize(static_cast<std::size_t>(desc.kv_count) * static_cast<std::size_t>(d.kv_width()));
      const auto missing = gather_rows(sources, tensor, b.seq, b.k0, b.k1, full);
      if (!missing) take_columns(full, static_cast<std::size_t>(d.kv_width()), kv_first, kv_last, rows);
      if (missing) {
        fail_instr(state, id,
                   std::string("the ") + lower::to_string(tensor) + " row of sequence " +
                       std::to_string(b.seq) + " token " + std::to_string(*missing) +
                       " is neither on this rank nor in a buffer of the messages this instruction reads");
      }
    }
  }

  return p;
}

double run_attention(RankState& state, int id) {
  const PackedAttention p = pack_attention(state, id);
  const AttentionDims& d = state.dims;
  const std::vector<layout::AttentionBlock>& blocks = p.blocks;
  const auto& descs = p.descs;
  const auto& shape = p.shape;
  const auto heads = static_cast<std::size_t>(shape.heads);
  const auto q_width = heads * static_cast<std::size_t>(d.head_dim);
  std::vector<float> o(p.q.size()), lse(static_cast<std::size_t>(shape.out_rows) * heads);
  kernels::throw_if_error(kernels::attention_forward(shape, descs, p.q, p.k, p.v, o, lse), state.where(id));
  const auto [o_first, o_last] = column_span(p.heads, lower::Tensor::O, d.head_dim);
  const auto lse_first = static_cast<std::size_t>(p.heads.q_begin),
             lse_last = static_cast<std::size_t>(p.heads.q_end);
  std::vector<float> merged_o, merged_lse;  // the rows' running results for these heads
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const auto& b = blocks[i];
    const auto& desc = descs[i];
    if (desc.q_count == 0) continue;
    RowStore& out = state.out();
    out.allocate(b.seq, b.q0, b.q1);
    state.lse.allocate(b.seq, b.q0, b.q1, -std::numeric_limits<float>::infinity());
    const auto rows = static_cast<std::size_t>(desc.q_count);
    const auto first = static_cast<std::size_t>(desc.out_row);
    merged_o.resize(rows * q_width);
    merged_lse.resize(rows * heads);
    take_columns(out.rows(b.seq, b.q0, b.q1), static_cast<std::size_t>(d.q_width()), o_first, o_last,
                 merged_o);
    take_columns(state.lse.rows(b.seq, b.q0, b.q1), static_cast<std::size_t>(d.heads), lse_first, lse_last,
                 merged_lse);
    kernels::throw_if_error(
        kernels::merge_partials(shape.heads, d.head_dim, merged_o, merged_lse,
                                std::span<const float>(o).subspan(first * q_width, rows * q_width),
                                std::span<const float>(lse).subspan(first * heads, rows * heads)),
        state.where(id));
    put_columns(out, b.seq, b.q0, b.q1, o_first, o_last, merged_o, false);
    put_columns(state.lse, b.seq, b.q0, b.q1, lse_first, lse_last, merged_lse, false);
  }
  return 4.0 * p.pairs * shape.heads * d.head_dim;
}

}  // namespace zb::reference
