// Split-and-accumulate: the backward of one block cut anywhere over its keys and queries sums to the
// backward of the uncut block, whether the pieces run as one descriptor list or ring-style (each key
// range packed in its own buffer with its own dK/dV, added to the owner's afterwards). Random shapes,
// GQA ratios, causal and full masks, and cut points over seeds; then the same random splits in float32
// against the float64 oracle's per-element bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "backward_oracle.hpp"
#include "backward_test_support.hpp"

namespace zb::kernels {
namespace {

using testing::Gradients;

// One sequence: queries at positions [q0, q1) packed from row 0, keys [0, key_end) packed from row 0.
struct SplitProblem {
  AttentionShape shape;
  std::int64_t q0 = 0, q1 = 0, key_end = 0;
  AttentionMask mask = AttentionMask::causal;
  std::vector<std::int64_t> q_cuts, k_cuts;  // absolute positions, first and last included
};

std::vector<std::int64_t> random_cuts(Rng& rng, std::int64_t begin, std::int64_t end,
                                      std::uint64_t max_extra) {
  std::vector<std::int64_t> cuts{begin, end};
  const std::uint64_t extra = rng.below(max_extra + 1);
  for (std::uint64_t c = 0; c < extra; ++c)
    cuts.push_back(begin + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(end - begin + 1))));
  std::ranges::sort(cuts);  // repeated cuts give empty pieces, which must contribute nothing
  return cuts;
}

SplitProblem random_problem(Rng& rng, std::int64_t max_length) {
  SplitProblem p;
  const int kv_heads = 1 + static_cast<int>(rng.below(2));
  const int heads = kv_heads * (1 + static_cast<int>(rng.below(4)));
  const int head_dim = 8 * (1 + static_cast<int>(rng.below(4)));
  const std::int64_t length =
      1 + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(max_length)));
  p.q0 = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(length)));
  p.q1 = p.q0 + 1 + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(length - p.q0)));
  p.mask = rng.below(4) != 0 ? AttentionMask::causal : AttentionMask::full;
  p.key_end = p.mask == AttentionMask::causal ? p.q1 : length;
  p.shape = {heads, kv_heads, head_dim, p.q1 - p.q0, p.key_end, p.q1 - p.q0};
  p.q_cuts = random_cuts(rng, p.q0, p.q1, 2);
  p.k_cuts = random_cuts(rng, 0, p.key_end, 5);
  return p;
}

AttentionBlockDesc piece(const SplitProblem& p, std::size_t qc, std::size_t kc, std::int64_t kv_row) {
  const std::int64_t a = p.q_cuts[qc], b = p.q_cuts[qc + 1], c = p.k_cuts[kc], e = p.k_cuts[kc + 1];
  return {a - p.q0, b - a, kv_row, e - c, a, c, p.mask, a - p.q0};
}

std::vector<AttentionBlockDesc> pieces(const SplitProblem& p) {
  std::vector<AttentionBlockDesc> out;
  for (std::size_t qc = 0; qc + 1 < p.q_cuts.size(); ++qc)
    for (std::size_t kc = 0; kc + 1 < p.k_cuts.size(); ++kc) out.push_back(piece(p, qc, kc, p.k_cuts[kc]));
  return out;
}

// Each key range in its own packed K/V and its own dK/dV, as a ring rank holds a received chunk and
// sends its gradient back; dQ accumulates in place (queries stay home). The owner adds the chunks.
Gradients<double> ring_style(const SplitProblem& p, const testing::BackwardInputs& in,
                             const testing::ForwardResult<double>& fwd) {
  Gradients<double> total = testing::zero_gradients<double>(p.shape);
  const auto row = static_cast<std::size_t>(p.shape.kv_heads * p.shape.head_dim);
  for (std::size_t kc = 0; kc + 1 < p.k_cuts.size(); ++kc) {
    const auto first = static_cast<std::size_t>(p.k_cuts[kc]),
               last = static_cast<std::size_t>(p.k_cuts[kc + 1]);
    AttentionShape chunk_shape = p.shape;
    chunk_shape.kv_tokens = p.k_cuts[kc + 1] - p.k_cuts[kc];
    const std::vector<double> k(in.qkv.k.begin() + first * row, in.qkv.k.begin() + last * row);
    const std::vector<double> v(in.qkv.v.begin() + first * row, in.qkv.v.begin() + last * row);
    Gradients<double> chunk = testing::zero_gradients<double>(chunk_shape);
    chunk.dq = std::move(total.dq);
    std::vector<AttentionBlockDesc> steps;
    for (std::size_t qc = 0; qc + 1 < p.q_cuts.size(); ++qc) steps.push_back(piece(p, qc, kc, 0));
    testing::accumulate_backward<double>(chunk_shape, steps, in.qkv.q, k, v, fwd, in.d_o, chunk);
    total.dq = std::move(chunk.dq);
    for (std::size_t i = 0; i < chunk.dk.size(); ++i) {
      total.dk[first * row + i] += chunk.dk[i];
      total.dv[first * row + i] += chunk.dv[i];
    }
  }
  return total;
}

TEST(AttentionBackwardSplit, PiecesSumToTheUnsplitBlock) {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    Rng rng(seed, 11);
    const SplitProblem p = random_problem(rng, 160);
    const testing::BackwardInputs in = testing::random_backward_inputs(rng, p.shape);
    const std::vector<AttentionBlockDesc> whole{{0, p.q1 - p.q0, 0, p.key_end, p.q0, 0, p.mask, 0}};
    const testing::ForwardResult<double> fwd =
        testing::merged_forward<double>(p.shape, whole, in.qkv.q, in.qkv.k, in.qkv.v);
    Gradients<double> unsplit = testing::zero_gradients<double>(p.shape);
    testing::accumulate_backward<double>(p.shape, whole, in.qkv.q, in.qkv.k, in.qkv.v, fwd, in.d_o, unsplit);

    // All pieces in one call, with O/LSE merged from the pieces' own forward, as an executor has them.
    const std::vector<AttentionBlockDesc> parts = pieces(p);
    const testing::ForwardResult<double> fwd_parts =
        testing::merged_forward<double>(p.shape, parts, in.qkv.q, in.qkv.k, in.qkv.v);
    Gradients<double> one_call = testing::zero_gradients<double>(p.shape);
    testing::accumulate_backward<double>(p.shape, parts, in.qkv.q, in.qkv.k, in.qkv.v, fwd_parts, in.d_o,
                                         one_call);

    const Gradients<double> ring = ring_style(p, in, fwd);
    for (const Gradients<double>* split : {&std::as_const(one_call), &ring}) {
      const char* how = split == &ring ? "ring-style" : "one call";
      EXPECT_LT(testing::relative_error<double>(split->dq, unsplit.dq), 1e-12)
          << "seed " << seed << " " << how;
      EXPECT_LT(testing::relative_error<double>(split->dk, unsplit.dk), 1e-12)
          << "seed " << seed << " " << how;
      EXPECT_LT(testing::relative_error<double>(split->dv, unsplit.dv), 1e-12)
          << "seed " << seed << " " << how;
    }
  }
}

TEST(AttentionBackwardSplit, RandomSplitsInFloatStayWithinTheOracleBound) {
  for (std::uint64_t seed = 1; seed <= 24; ++seed) {
    Rng rng(seed, 12);
    const SplitProblem p = random_problem(rng, 120);
    const testing::BackwardInputs in = testing::random_backward_inputs(rng, p.shape);
    const std::vector<AttentionBlockDesc> parts = pieces(p);
    const testing::BackwardOracle want = testing::backward_oracle(p.shape, parts, in.qkv, in.d_o, 0x1.0p-24);
    const Gradients<float> got = testing::forward_backward<float>(p.shape, parts, in);
    EXPECT_LE(testing::worst_bound_ratio<float>(got.dq, want.dq, want.dq_bound), 1.0) << "seed " << seed;
    EXPECT_LE(testing::worst_bound_ratio<float>(got.dk, want.dk, want.dk_bound), 1.0) << "seed " << seed;
    EXPECT_LE(testing::worst_bound_ratio<float>(got.dv, want.dv, want.dv_bound), 1.0) << "seed " << seed;
  }
}

}  // namespace
}  // namespace zb::kernels
