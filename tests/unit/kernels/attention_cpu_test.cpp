// CPU attention against the naive float64 softmax(QKᵀ)V: causal offsets, one-token blocks, full vs
// causal, GQA ratios 1/4/8, and argument errors that name what is wrong.
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "kernel_test_support.hpp"

namespace zb::kernels {
namespace {

using testing::AttentionInputs;
using testing::AttentionOutputs;

AttentionOutputs run_double(const AttentionShape& shape, std::span<const AttentionBlockDesc> blocks,
                            const AttentionInputs& in) {
  AttentionOutputs out = testing::nan_outputs(shape);
  const Status status =
      attention_forward(shape, blocks, std::span<const double>(in.q), std::span<const double>(in.k),
                        std::span<const double>(in.v), std::span<double>(out.o), std::span<double>(out.lse));
  EXPECT_TRUE(status.ok()) << status.message();
  return out;
}

void expect_matches_naive(const AttentionShape& shape, const std::vector<AttentionBlockDesc>& blocks,
                          std::uint64_t seed) {
  Rng rng(seed);
  const AttentionInputs in = testing::random_inputs(rng, shape);
  AttentionOutputs expected = testing::nan_outputs(shape);
  testing::naive_attention(shape, blocks, in, expected);
  const AttentionOutputs got = run_double(shape, blocks, in);
  EXPECT_LT(testing::relative_error<double>(got.o, expected.o), 1e-12);
  EXPECT_LT(testing::max_abs_lse_error<double>(got.lse, expected.lse), 1e-12);

  // The float32 kernel follows the same algorithm in single precision.
  const std::vector<float> qf = testing::to_float(in.q), kf = testing::to_float(in.k),
                           vf = testing::to_float(in.v);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> of(expected.o.size(), nan), lsef(expected.lse.size(), nan);
  ASSERT_TRUE(attention_forward(shape, blocks, std::span<const float>(qf), std::span<const float>(kf),
                                std::span<const float>(vf), std::span<float>(of), std::span<float>(lsef))
                  .ok());
  EXPECT_LT(testing::relative_error<float>(of, expected.o), 1e-5);
  EXPECT_LT(testing::max_abs_lse_error<float>(lsef, expected.lse), 1e-4);
}

// One sequence of `length` tokens cut into query blocks that each read all keys up to their end, with
// absolute positions: the union must equal the causal attention over the whole sequence.
TEST(AttentionCpu, CausalOffsetsMatchWholeSequence) {
  const std::int64_t length = 150;
  const AttentionShape shape{4, 2, 16, length, length, length};
  const std::vector<std::int64_t> cuts{0, 37, 64, 129, length};
  expect_matches_naive(shape, testing::causal_query_blocks(cuts), 11);
}

TEST(AttentionCpu, KeysStartAfterQueriesMeansEmptyRows) {
  // Queries at positions 10..14, keys at 12..19: queries 10 and 11 see nothing (O = 0, LSE = −inf).
  const AttentionShape shape{2, 2, 8, 5, 8, 5};
  const std::vector<AttentionBlockDesc> blocks{{0, 5, 0, 8, 10, 12, AttentionMask::causal, 0}};
  Rng rng(3);
  const AttentionInputs in = testing::random_inputs(rng, shape);
  const AttentionOutputs got = run_double(shape, blocks, in);
  for (int h = 0; h < 2; ++h) {
    EXPECT_EQ(got.lse[static_cast<std::size_t>(0 * 2 + h)], -std::numeric_limits<double>::infinity());
    EXPECT_EQ(got.lse[static_cast<std::size_t>(1 * 2 + h)], -std::numeric_limits<double>::infinity());
    EXPECT_TRUE(std::isfinite(got.lse[static_cast<std::size_t>(2 * 2 + h)]));
  }
  for (int c = 0; c < 2 * 2 * 8; ++c) EXPECT_EQ(got.o[static_cast<std::size_t>(c)], 0.0);
  expect_matches_naive(shape, blocks, 3);
}

TEST(AttentionCpu, OneTokenBlocks) {
  const AttentionShape shape{4, 4, 16, 3, 3, 3};
  const std::vector<AttentionBlockDesc> blocks = testing::one_token_blocks();
  Rng rng(5);
  const AttentionInputs in = testing::random_inputs(rng, shape);
  const AttentionOutputs got = run_double(shape, blocks, in);
  // A single visible key: O is its value row exactly, LSE is its score.
  for (int c = 0; c < 4 * 16; ++c)
    EXPECT_EQ(got.o[static_cast<std::size_t>(c)], in.v[static_cast<std::size_t>(c)]);
  EXPECT_EQ(got.lse[4], -std::numeric_limits<double>::infinity());
  expect_matches_naive(shape, blocks, 5);
}

TEST(AttentionCpu, FullEqualsCausalWhenAllKeysPrecedeQueries) {
  const AttentionShape shape{2, 1, 16, 20, 30, 40};
  Rng rng(9);
  const AttentionInputs in = testing::random_inputs(rng, shape);
  // Keys at positions 0..29, queries at 30..49: causal sees every key.
  const std::vector<AttentionBlockDesc> causal{{0, 20, 0, 30, 30, 0, AttentionMask::causal, 0}};
  const std::vector<AttentionBlockDesc> full{{0, 20, 0, 30, 30, 0, AttentionMask::full, 20}};
  const AttentionOutputs a = run_double(shape, causal, in);
  const AttentionOutputs b = run_double(shape, full, in);
  for (std::size_t i = 0; i < a.o.size() / 2; ++i) EXPECT_EQ(a.o[i], b.o[i + a.o.size() / 2]);
  // On the diagonal they differ: the first query sees one key under causal, all under full.
  const std::vector<AttentionBlockDesc> diagonal_causal{{0, 20, 0, 20, 0, 0, AttentionMask::causal, 0}};
  const std::vector<AttentionBlockDesc> diagonal_full{{0, 20, 0, 20, 0, 0, AttentionMask::full, 0}};
  EXPECT_NE(run_double(shape, diagonal_causal, in).lse[0], run_double(shape, diagonal_full, in).lse[0]);
  expect_matches_naive(shape, diagonal_full, 9);
}

class AttentionCpuGqa : public ::testing::TestWithParam<int> {};

TEST_P(AttentionCpuGqa, RandomBlocksMatchNaive) {
  const int ratio = GetParam();
  const AttentionShape shape{8, 8 / ratio, 32, 200, 260, 200};
  // Two sequences packed back to back, blocks with offsets, lengths not multiples of the 64-key tile.
  const std::vector<AttentionBlockDesc> blocks{{0, 70, 0, 70, 0, 0, AttentionMask::causal, 0},
                                               {70, 65, 70, 130, 65, 0, AttentionMask::causal, 70},
                                               {135, 65, 200, 60, 500, 300, AttentionMask::full, 135}};
  expect_matches_naive(shape, blocks, 100 + static_cast<std::uint64_t>(ratio));
}

INSTANTIATE_TEST_SUITE_P(Ratios, AttentionCpuGqa, ::testing::Values(1, 4, 8));

TEST(AttentionCpu, ErrorsNameTheArgument) {
  std::vector<double> q(4 * 8), k(4 * 8), v(4 * 8), o(4 * 8), lse(4);
  const auto run = [&](const AttentionShape& shape, const std::vector<AttentionBlockDesc>& blocks) {
    return attention_forward(shape, blocks, std::span<const double>(q), std::span<const double>(k),
                             std::span<const double>(v), std::span<double>(o), std::span<double>(lse));
  };
  const AttentionShape good{1, 1, 8, 4, 4, 4};
  EXPECT_TRUE(run(good, {{0, 4, 0, 4, 0, 0, AttentionMask::causal, 0}}).ok());
  EXPECT_NE(run({3, 2, 8, 4, 4, 4}, {}).message().find("kv_heads"), std::string::npos);
  EXPECT_NE(run(good, {{2, 3, 0, 4, 0, 0, AttentionMask::causal, 0}}).message().find("blocks[0].q rows"),
            std::string::npos);
  EXPECT_NE(
      run(good, {{0, 2, 0, 4, 0, 0, AttentionMask::causal, 0}, {2, 2, 0, 4, 0, 0, AttentionMask::causal, 1}})
          .message()
          .find("overlapping"),
      std::string::npos);
  EXPECT_NE(run({1, 1, 8, 5, 4, 4}, {}).message().find("q has"), std::string::npos);
}

}  // namespace
}  // namespace zb::kernels
