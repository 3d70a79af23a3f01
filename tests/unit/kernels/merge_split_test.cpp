// The LSE merge: splitting a sequence's keys into blocks and merging the partial results equals the
// unsplit attention (property test over random seeds), and −inf marks an empty side.
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "kernel_test_support.hpp"

namespace zb::kernels {
namespace {

TEST(MergePartials, SplitKeysThenMergeEqualsUnsplit) {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    Rng rng(seed, 7);
    const int kv_heads = 1 + static_cast<int>(rng.below(2));
    const int heads = kv_heads * (1 + static_cast<int>(rng.below(4)));
    const int head_dim = 8 * (1 + static_cast<int>(rng.below(4)));
    const std::int64_t length = 1 + static_cast<std::int64_t>(rng.below(180));
    const std::int64_t q0 = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(length)));
    const std::int64_t q1 =
        q0 + 1 + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(length - q0)));
    const bool causal = rng.below(4) != 0;
    const std::int64_t key_end = causal ? q1 : length;  // keys a causal block can need
    const AttentionShape shape{heads, kv_heads, head_dim, length, length, q1 - q0};
    const testing::AttentionInputs in = testing::random_inputs(rng, shape);
    const AttentionMask mask = causal ? AttentionMask::causal : AttentionMask::full;

    const std::vector<AttentionBlockDesc> whole{{q0, q1 - q0, 0, key_end, q0, 0, mask, 0}};
    testing::AttentionOutputs unsplit = testing::nan_outputs(shape);
    ASSERT_TRUE(attention_forward(shape, whole, std::span<const double>(in.q), std::span<const double>(in.k),
                                  std::span<const double>(in.v), std::span<double>(unsplit.o),
                                  std::span<double>(unsplit.lse))
                    .ok());

    // Random cut points over the keys; each chunk is its own block with its own partial result.
    std::vector<std::int64_t> cuts{0, key_end};
    const auto extra = rng.below(5);
    for (std::uint64_t c = 0; c < extra; ++c)
      cuts.push_back(static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(key_end + 1))));
    std::ranges::sort(cuts);
    testing::AttentionOutputs merged = testing::nan_outputs(shape);
    bool first = true;
    for (std::size_t c = 0; c + 1 < cuts.size(); ++c) {
      const std::vector<AttentionBlockDesc> part{
          {q0, q1 - q0, cuts[c], cuts[c + 1] - cuts[c], q0, cuts[c], mask, 0}};
      testing::AttentionOutputs partial = testing::nan_outputs(shape);
      ASSERT_TRUE(attention_forward(shape, part, std::span<const double>(in.q), std::span<const double>(in.k),
                                    std::span<const double>(in.v), std::span<double>(partial.o),
                                    std::span<double>(partial.lse))
                      .ok());
      if (first) {
        merged = partial;
        first = false;
      } else {
        ASSERT_TRUE(merge_partials(heads, head_dim, std::span<double>(merged.o),
                                   std::span<double>(merged.lse), std::span<const double>(partial.o),
                                   std::span<const double>(partial.lse))
                        .ok());
      }
    }
    EXPECT_LT(testing::relative_error<double>(merged.o, unsplit.o), 1e-12) << "seed " << seed;
    EXPECT_LT(testing::max_abs_lse_error<double>(merged.lse, unsplit.lse), 1e-12) << "seed " << seed;
  }
}

TEST(MergePartials, MinusInfinityIsEmpty) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> o_a{1, 2, 0, 0, 5, 6}, lse_a{0.5, -inf, -inf};
  const std::vector<double> o_b{9, 9, 3, 4, 0, 0}, lse_b{-inf, 0.25, -inf};
  ASSERT_TRUE(merge_partials(1, 2, std::span<double>(o_a), std::span<double>(lse_a),
                             std::span<const double>(o_b), std::span<const double>(lse_b))
                  .ok());
  EXPECT_EQ(o_a, (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(lse_a[0], 0.5);
  EXPECT_EQ(lse_a[1], 0.25);
  EXPECT_EQ(lse_a[2], -inf);
}

TEST(MergePartials, EqualWeightsAverage) {
  std::vector<float> o_a{2, 4}, lse_a{1.0f};
  const std::vector<float> o_b{4, 8}, lse_b{1.0f};
  ASSERT_TRUE(merge_partials(1, 2, std::span<float>(o_a), std::span<float>(lse_a),
                             std::span<const float>(o_b), std::span<const float>(lse_b))
                  .ok());
  EXPECT_FLOAT_EQ(o_a[0], 3);
  EXPECT_FLOAT_EQ(o_a[1], 6);
  EXPECT_FLOAT_EQ(lse_a[0], 1.0f + std::log(2.0f));
}

TEST(MergePartials, SizeMismatchIsNamed) {
  std::vector<double> o_a(6), lse_a(3), o_b(5), lse_b(3);
  const Status status = merge_partials(1, 2, std::span<double>(o_a), std::span<double>(lse_a),
                                       std::span<const double>(o_b), std::span<const double>(lse_b));
  EXPECT_NE(status.message().find("o_b"), std::string::npos) << status.message();
}

}  // namespace
}  // namespace zb::kernels
