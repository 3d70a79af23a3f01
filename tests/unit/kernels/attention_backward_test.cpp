// CPU attention backward against the float64 Jacobian oracle (itself checked by finite differences):
// causal offsets, keys after queries (empty rows), one-token blocks, full masks, GQA 1/4/8, and the
// argument errors. float64 kernels match to 1e-12; float32 kernels stay within the derived per-element
// rounding bound (docs/REFERENCE.md, "Backward tolerance").
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "backward_oracle.hpp"
#include "backward_test_support.hpp"

namespace zb::kernels {
namespace {

using testing::BackwardInputs;
using testing::BackwardOracle;
using testing::Gradients;

constexpr double kFloatRoundoff = 0x1.0p-24;

void expect_matches_oracle(const AttentionShape& shape, const std::vector<AttentionBlockDesc>& blocks,
                           const BackwardInputs& in) {
  const BackwardOracle want = testing::backward_oracle(shape, blocks, in.qkv, in.d_o, kFloatRoundoff);
  const Gradients<double> g64 = testing::forward_backward<double>(shape, blocks, in);
  EXPECT_LT(testing::relative_error<double>(g64.dq, want.dq), 1e-12);
  EXPECT_LT(testing::relative_error<double>(g64.dk, want.dk), 1e-12);
  EXPECT_LT(testing::relative_error<double>(g64.dv, want.dv), 1e-12);

  const Gradients<float> g32 = testing::forward_backward<float>(shape, blocks, in);
  EXPECT_LE(testing::worst_bound_ratio<float>(g32.dq, want.dq, want.dq_bound), 1.0);
  EXPECT_LE(testing::worst_bound_ratio<float>(g32.dk, want.dk, want.dk_bound), 1.0);
  EXPECT_LE(testing::worst_bound_ratio<float>(g32.dv, want.dv, want.dv_bound), 1.0);
  EXPECT_LT(testing::relative_error<float>(g32.dq, want.dq), 1e-5);
  EXPECT_LT(testing::relative_error<float>(g32.dk, want.dk), 1e-5);
  EXPECT_LT(testing::relative_error<float>(g32.dv, want.dv), 1e-5);
}

void expect_matches_oracle(const AttentionShape& shape, const std::vector<AttentionBlockDesc>& blocks,
                           std::uint64_t seed) {
  Rng rng(seed);
  expect_matches_oracle(shape, blocks, testing::random_backward_inputs(rng, shape));
}

// L = Σ dO ∘ O is the loss whose gradients the oracle gives; central differences of L in a few random
// coordinates of Q, K and V must agree with them. This checks the oracle, not a kernel.
TEST(BackwardOracle, MatchesFiniteDifferences) {
  const AttentionShape shape{4, 2, 8, 24, 24, 24};
  const std::vector<AttentionBlockDesc> blocks{{0, 10, 0, 10, 0, 0, AttentionMask::causal, 0},
                                               {10, 14, 6, 18, 10, 6, AttentionMask::causal, 10},
                                               {10, 14, 0, 6, 10, 0, AttentionMask::full, 10}};
  Rng rng(21);
  const BackwardInputs in = testing::random_backward_inputs(rng, shape);
  const BackwardOracle grads = testing::backward_oracle(shape, blocks, in.qkv, in.d_o, 0);
  const auto loss = [&](const testing::AttentionInputs& qkv) {
    const BackwardOracle r = testing::backward_oracle(shape, blocks, qkv, in.d_o, 0);
    double sum = 0;
    for (std::size_t i = 0; i < r.o.size(); ++i) sum += in.d_o[i] * r.o[i];
    return sum;
  };
  const double step = 1e-5;
  for (int trial = 0; trial < 24; ++trial) {
    const int tensor = trial % 3;
    testing::AttentionInputs plus = in.qkv, minus = in.qkv;
    std::vector<double>& p = tensor == 0 ? plus.q : tensor == 1 ? plus.k : plus.v;
    std::vector<double>& m = tensor == 0 ? minus.q : tensor == 1 ? minus.k : minus.v;
    const std::size_t at = rng.below(p.size());
    p[at] += step;
    m[at] -= step;
    const double numeric = (loss(plus) - loss(minus)) / (2 * step);
    const double analytic = (tensor == 0 ? grads.dq : tensor == 1 ? grads.dk : grads.dv)[at];
    EXPECT_NEAR(numeric, analytic, 1e-7 * (1 + std::abs(analytic)))
        << "tensor " << tensor << " element " << at;
  }
}

TEST(AttentionBackwardCpu, CausalOffsetsMatchOracle) {
  const std::int64_t length = 150;
  const AttentionShape shape{4, 2, 16, length, length, length};
  const std::vector<std::int64_t> cuts{0, 37, 64, 129, length};
  expect_matches_oracle(shape, testing::causal_query_blocks(cuts), 31);
}

// Queries at positions 10..14, keys at 12..19: queries 10 and 11 see nothing. Their LSE is −inf and
// their dQ must be exactly 0 (not NaN) whatever dO says; the other rows still match the oracle.
TEST(AttentionBackwardCpu, RowsThatSeeNoKeyGetZeroGradients) {
  const AttentionShape shape{2, 1, 8, 5, 8, 5};
  const std::vector<AttentionBlockDesc> blocks{{0, 5, 0, 8, 10, 12, AttentionMask::causal, 0}};
  Rng rng(3);
  const BackwardInputs in = testing::random_backward_inputs(rng, shape);
  const Gradients<float> g = testing::forward_backward<float>(shape, blocks, in);
  for (std::size_t c = 0; c < 2 * 2 * 8; ++c) EXPECT_EQ(g.dq[c], 0.0f) << c;
  for (float x : g.dq) EXPECT_FALSE(std::isnan(x));
  expect_matches_oracle(shape, blocks, in);
}

TEST(AttentionBackwardCpu, OneTokenBlocks) {
  const AttentionShape shape{4, 4, 16, 3, 3, 3};
  // A single visible key has P = 1, so dS = 0 (dQ = dK = 0) and dV = dO; the key after its query
  // (block 1) gets nothing.
  const std::vector<AttentionBlockDesc> blocks = testing::one_token_blocks();
  Rng rng(5);
  const BackwardInputs in = testing::random_backward_inputs(rng, shape);
  const Gradients<double> g = testing::forward_backward<double>(shape, blocks, in);
  for (std::size_t c = 0; c < 4 * 16; ++c) {
    EXPECT_EQ(g.dv[c], in.d_o[c]);
    EXPECT_NEAR(g.dq[c], 0.0, 1e-15);
    EXPECT_EQ(g.dv[4 * 16 + c], 0.0);  // the key nobody sees
  }
  expect_matches_oracle(shape, blocks, in);
}

TEST(AttentionBackwardCpu, FullMaskMatchesOracle) {
  const AttentionShape shape{2, 1, 16, 20, 30, 20};
  expect_matches_oracle(shape, {{0, 20, 0, 30, 0, 0, AttentionMask::full, 0}}, 9);
}

class AttentionBackwardGqa : public ::testing::TestWithParam<int> {};

// Two sequences packed back to back, blocks with offsets and lengths that are not tile multiples; the
// kv heads' gradients sum over their query heads.
TEST_P(AttentionBackwardGqa, PackedBlocksMatchOracle) {
  const int ratio = GetParam();
  const AttentionShape shape{8, 8 / ratio, 32, 120, 160, 120};
  const std::vector<AttentionBlockDesc> blocks{{0, 50, 0, 50, 0, 0, AttentionMask::causal, 0},
                                               {50, 35, 50, 70, 35, 0, AttentionMask::causal, 50},
                                               {85, 35, 120, 40, 500, 300, AttentionMask::full, 85}};
  expect_matches_oracle(shape, blocks, 200 + static_cast<std::uint64_t>(ratio));
}

INSTANTIATE_TEST_SUITE_P(Ratios, AttentionBackwardGqa, ::testing::Values(1, 4, 8),
                         [](const ::testing::TestParamInfo<int>& param_info) {
                           return "ratio" + std::to_string(param_info.param);
                         });

TEST(AttentionBackwardCpu, ErrorsNameTheArgument) {
  const AttentionShape shape{1, 1, 8, 4, 4, 4};
  std::vector<double> t(4 * 8, 0.5), lse(4, 0.0), dq(4 * 8), dk(4 * 8), dv(4 * 8), short_dk(3 * 8);
  const auto run = [&](const std::vector<AttentionBlockDesc>& blocks, std::span<double> dk_out) {
    return attention_backward(shape, blocks, std::span<const double>(t), std::span<const double>(t),
                              std::span<const double>(t), std::span<const double>(t),
                              std::span<const double>(t), std::span<const double>(lse), std::span<double>(dq),
                              dk_out, std::span<double>(dv));
  };
  const AttentionBlockDesc whole{0, 4, 0, 4, 0, 0, AttentionMask::causal, 0};
  EXPECT_TRUE(run({whole}, dk).ok());
  // Blocks sharing output rows are a ring of steps, not an error (the forward refuses them).
  EXPECT_TRUE(run({whole, {0, 4, 0, 2, 0, 0, AttentionMask::full, 0}}, dk).ok());
  EXPECT_NE(run({whole}, short_dk).message().find("dk has"), std::string::npos);
  EXPECT_NE(run({{0, 4, 1, 4, 0, 0, AttentionMask::causal, 0}}, dk).message().find("blocks[0].kv rows"),
            std::string::npos);
}

// An LSE of −inf on a row that sees keys means the caller passed the wrong LSE (a partial one, or one
// from another block): reported with the row, and nothing is accumulated.
TEST(AttentionBackwardCpu, MinusInfinityLseOnASeeingRowIsRefused) {
  const AttentionShape shape{2, 2, 4, 3, 3, 3};
  const std::vector<float> t(3 * 2 * 4, 0.25f);
  std::vector<float> lse(3 * 2, 1.0f);
  lse[2 * 2 + 1] = -std::numeric_limits<float>::infinity();  // out row 2, head 1
  std::vector<float> dq(t.size(), 0.0f), dk(t.size(), 0.0f), dv(t.size(), 0.0f);
  const std::vector<AttentionBlockDesc> blocks{{0, 3, 0, 3, 0, 0, AttentionMask::causal, 0}};
  const Status s = attention_backward(shape, blocks, std::span<const float>(t), std::span<const float>(t),
                                      std::span<const float>(t), std::span<const float>(t),
                                      std::span<const float>(t), std::span<const float>(lse),
                                      std::span<float>(dq), std::span<float>(dk), std::span<float>(dv));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("out row 2, head 1) sees 3 keys but its LSE is -inf"), std::string::npos)
      << s.message();
  for (float x : dv) EXPECT_EQ(x, 0.0f);
}

}  // namespace
}  // namespace zb::kernels
