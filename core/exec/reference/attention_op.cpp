#include "core/exec/reference/attention_op.hpp"

#include <algorithm>
#include <limits>

#include "core/exec/reference/rank_location.hpp"

namespace zb::reference {
namespace {

// Causal pairs of a block: queries [q0, q1) against keys [k0, k1) with k ≤ q.
double causal_pairs(const plan::AttentionBlock& b) {
  double pairs = 0;
  for (std::int64_t q = b.q0; q < b.q1; ++q) pairs += static_cast<double>(std::clamp<std::int64_t>(q + 1 - b.k0, 0, b.k1 - b.k0));
  return pairs;
}

}  // namespace

void fail_instr(const RankState& state, int id, const std::string& what) {
  throw Error(ExitCode::runtime, rank_location(state.rank), state.where(id) + ": " + what);
}

PackedAttention pack_attention(const RankState& state, int id) {
  const lower::Instr& instr = state.instr(id);
  const auto& ops = state.in.plan.ranks.at(static_cast<std::size_t>(state.rank)).ops;
  if (instr.plan_op < 0 || static_cast<std::size_t>(instr.plan_op) >= ops.size() ||
      ops[static_cast<std::size_t>(instr.plan_op)].kind != plan::OpKind::attention) {
    fail_instr(state, id, "its plan op " + std::to_string(instr.plan_op) + " is not an attention op of this rank");
  }
  const plan::Op& op = ops[static_cast<std::size_t>(instr.plan_op)];
  PackedAttention p;
  p.blocks = plan::expand_blocks(state.in.plan, state.rank, op);
  const std::vector<plan::AttentionBlock>& blocks = p.blocks;
  const AttentionDims& d = state.dims;
  const auto q_width = static_cast<std::size_t>(d.q_width());
  const auto kv_width = static_cast<std::size_t>(d.kv_width());

  kernels::AttentionShape& shape = p.shape;
  shape = {d.heads, d.kv_heads, d.head_dim, 0, 0, 0};
  std::vector<kernels::AttentionBlockDesc>& descs = p.descs;
  descs.reserve(blocks.size());
  double& pairs = p.pairs;
  for (const auto& b : blocks) {
    kernels::AttentionBlockDesc desc;
    desc.q_row = shape.q_tokens;
    desc.q_count = b.q1 - b.q0;
    desc.kv_row = shape.kv_tokens;
    desc.kv_count = b.k1 - b.k0;
    desc.q_position = b.q0;
    desc.kv_position = b.k0;
    desc.mask = b.mask == plan::Mask::causal ? kernels::AttentionMask::causal : kernels::AttentionMask::full;
    desc.out_row = desc.q_row;
    descs.push_back(desc);
    shape.q_tokens += desc.q_count;
    shape.kv_tokens += desc.kv_count;
    pairs += b.mask == plan::Mask::causal ? causal_pairs(b) : static_cast<double>(desc.q_count * desc.kv_count);
  }
  shape.out_rows = shape.q_tokens;

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
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const auto& b = blocks[i];
    const auto& desc = descs[i];
    if (const auto missing = own_q.first_missing(b.seq, b.q0, b.q1)) {
      fail_instr(state, id, "the query row of sequence " + std::to_string(b.seq) + " token " + std::to_string(*missing) +
                          " is not on this rank (the attention layout does not give it this token)");
    }
    const auto q_rows = own_q.rows(b.seq, b.q0, b.q1);
    std::copy(q_rows.begin(), q_rows.end(), q.begin() + desc.q_row * static_cast<std::ptrdiff_t>(q_width));
    for (const auto& [tensor, into] : {std::pair{lower::Tensor::K, &k}, std::pair{lower::Tensor::V, &v}}) {
      const auto rows = std::span<float>(*into).subspan(static_cast<std::size_t>(desc.kv_row) * kv_width,
                                                        static_cast<std::size_t>(desc.kv_count) * kv_width);
      if (const auto missing = gather_rows(sources, tensor, b.seq, b.k0, b.k1, rows)) {
        fail_instr(state, id, std::string("the ") + lower::to_string(tensor) + " row of sequence " + std::to_string(b.seq) +
                            " token " + std::to_string(*missing) +
                            " is neither on this rank nor in a buffer of the messages this instruction reads");
      }
    }
  }

  return p;
}

double run_attention(RankState& state, int id) {
  const PackedAttention p = pack_attention(state, id);
  const AttentionDims& d = state.dims;
  const auto q_width = static_cast<std::size_t>(d.q_width());
  const std::vector<plan::AttentionBlock>& blocks = p.blocks;
  const auto& descs = p.descs;
  const auto& shape = p.shape;
  std::vector<float> o(p.q.size()), lse(static_cast<std::size_t>(shape.out_rows) * static_cast<std::size_t>(d.heads));
  kernels::throw_if_error(kernels::attention_forward(shape, descs, p.q, p.k, p.v, o, lse), state.where(id));

  const auto heads = static_cast<std::size_t>(d.heads);
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const auto& b = blocks[i];
    const auto& desc = descs[i];
    if (desc.q_count == 0) continue;
    RowStore& out = state.out();
    out.allocate(b.seq, b.q0, b.q1);
    state.lse.allocate(b.seq, b.q0, b.q1, -std::numeric_limits<float>::infinity());
    const auto rows = static_cast<std::size_t>(desc.q_count);
    const auto first = static_cast<std::size_t>(desc.out_row);
    kernels::throw_if_error(
        kernels::merge_partials(d.heads, d.head_dim, out.rows(b.seq, b.q0, b.q1), state.lse.rows(b.seq, b.q0, b.q1),
                                std::span<const float>(o).subspan(first * q_width, rows * q_width),
                                std::span<const float>(lse).subspan(first * heads, rows * heads)),
        state.where(id));
    out.mark_present(b.seq, b.q0, b.q1);
    state.lse.mark_present(b.seq, b.q0, b.q1);
  }
  return 4.0 * p.pairs * d.heads * d.head_dim;
}

}  // namespace zb::reference
