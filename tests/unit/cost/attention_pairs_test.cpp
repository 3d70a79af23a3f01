// CostModel::attention_pairs: the closed form against hand-computed cases and against brute-force
// counting over many random small ranges, including empty, disjoint and partially overlapping ones.
#include <cstdint>

#include <gtest/gtest.h>

#include "core/common/rng.hpp"
#include "core/cost/cost_model.hpp"

namespace zb {
namespace {

std::int64_t brute_force_pairs(std::int64_t q0, std::int64_t q1, std::int64_t k0, std::int64_t k1,
                               bool causal) {
  std::int64_t pairs = 0;
  for (std::int64_t q = q0; q < q1; ++q) {
    for (std::int64_t k = k0; k < k1; ++k) {
      if (!causal || k <= q) ++pairs;
    }
  }
  return pairs;
}

TEST(AttentionPairs, WholeCausalSequenceIsTriangleWithDiagonal) {
  EXPECT_EQ(CostModel::attention_pairs(0, 4096, 0, 4096, true), 4096LL * 4097 / 2);
  EXPECT_EQ(CostModel::attention_pairs(0, 1, 0, 1, true), 1);
  // Shifting both ranges together changes nothing: only relative positions matter.
  EXPECT_EQ(CostModel::attention_pairs(1000, 5096, 1000, 5096, true), 4096LL * 4097 / 2);
}

TEST(AttentionPairs, NonCausalIsTheRectangle) {
  EXPECT_EQ(CostModel::attention_pairs(0, 10, 20, 27, false), 70);
  EXPECT_EQ(CostModel::attention_pairs(5, 5, 0, 10, false), 0);
}

TEST(AttentionPairs, EmptyAndReversedRangesGiveZero) {
  EXPECT_EQ(CostModel::attention_pairs(10, 10, 0, 100, true), 0);
  EXPECT_EQ(CostModel::attention_pairs(0, 100, 50, 50, true), 0);
  EXPECT_EQ(CostModel::attention_pairs(10, 5, 0, 100, true), 0);
  EXPECT_EQ(CostModel::attention_pairs(0, 100, 60, 40, false), 0);
}

TEST(AttentionPairs, DisjointRanges) {
  // Queries entirely before the keys see none of them; entirely after, all of them.
  EXPECT_EQ(CostModel::attention_pairs(0, 100, 100, 200, true), 0);
  EXPECT_EQ(CostModel::attention_pairs(200, 300, 0, 100, true), 100 * 100);
}

TEST(AttentionPairs, ZigzagHalvesAreBalanced) {
  // Sequence of s = 16 on P = 2 ranks in 2P = 4 chunks of 4: rank 0 holds chunks 0 and 3, rank 1 chunks
  // 1 and 2. Zigzag gives both ranks the same number of causal pairs, and together they cover s(s+1)/2.
  const auto rank_pairs = [](std::int64_t a, std::int64_t b) {
    return CostModel::attention_pairs(a * 4, (a + 1) * 4, 0, 16, true) +
           CostModel::attention_pairs(b * 4, (b + 1) * 4, 0, 16, true);
  };
  EXPECT_EQ(rank_pairs(0, 3), rank_pairs(1, 2));
  EXPECT_EQ(rank_pairs(0, 3) + rank_pairs(1, 2), 16 * 17 / 2);
}

TEST(AttentionPairs, MatchesBruteForceOnRandomRanges) {
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    Rng rng(seed);
    for (int trial = 0; trial < 50; ++trial) {
      // Small ranges over [0, 48) with both orders allowed, so that empty, reversed, disjoint, nested
      // and partially overlapping ranges all occur.
      const auto q0 = static_cast<std::int64_t>(rng.below(48));
      const auto q1 = static_cast<std::int64_t>(rng.below(48));
      const auto k0 = static_cast<std::int64_t>(rng.below(48));
      const auto k1 = static_cast<std::int64_t>(rng.below(48));
      for (const bool causal : {true, false}) {
        ASSERT_EQ(CostModel::attention_pairs(q0, q1, k0, k1, causal),
                  brute_force_pairs(q0, q1, k0, k1, causal))
            << "seed " << seed << " q=[" << q0 << "," << q1 << ") k=[" << k0 << "," << k1 << ") causal "
            << causal;
      }
    }
  }
}

TEST(AttentionPairs, NoOverflowForRangesOfTwoToThe31) {
  constexpr std::int64_t n = std::int64_t{1} << 31;
  // n(n+1)/2 = 2^61 + 2^30.
  const std::int64_t triangle = (std::int64_t{1} << 61) + (std::int64_t{1} << 30);
  EXPECT_EQ(CostModel::attention_pairs(0, n, 0, n, true), triangle);
  EXPECT_EQ(CostModel::attention_pairs(n, 2 * n, n, 2 * n, true), triangle);
  EXPECT_EQ(CostModel::attention_pairs(n, 2 * n, 0, n, true), n * n);
  EXPECT_EQ(CostModel::attention_pairs(0, 2 * n, 0, n, true), triangle + n * n);
  EXPECT_EQ(CostModel::attention_pairs(0, n, 0, n, false), n * n);
}

}  // namespace
}  // namespace zb
