// Pack/unpack round trips bit for bit, GEMM against a naive triple loop, and the host bf16/fp16
// conversions (round to nearest even, every 16-bit pattern round-trips).
#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/common/rng.hpp"
#include "kernels/gemm.hpp"
#include "kernels/half.hpp"
#include "kernels/pack.hpp"

namespace zb::kernels {
namespace {

std::vector<std::byte> random_bytes(Rng& rng, std::size_t count) {
  std::vector<std::byte> bytes(count);
  for (std::byte& b : bytes) b = static_cast<std::byte>(rng.next_u64() & 0xFF);
  return bytes;
}

TEST(PackRows, RoundTripIsBitExact) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    Rng rng(seed, 3);
    const std::size_t row_bytes = 2 * (1 + rng.below(40));  // odd dtype-free sizes, like heads·d·2
    const std::int64_t packed_rows = 1 + static_cast<std::int64_t>(rng.below(300));
    // Disjoint ranges in random order (a remap moves them out of order), some empty.
    std::vector<RowRange> ranges;
    for (std::int64_t row = 0; row < packed_rows;) {
      const auto rows =
          static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(packed_rows - row) + 1));
      if (rng.below(3) != 0) ranges.push_back({row, rows});
      row += rows == 0 ? 1 : rows;
    }
    for (std::size_t i = ranges.size(); i > 1; --i) std::swap(ranges[i - 1], ranges[rng.below(i)]);

    const std::vector<std::byte> packed =
        random_bytes(rng, static_cast<std::size_t>(packed_rows) * row_bytes);
    std::vector<std::byte> contiguous(static_cast<std::size_t>(total_rows(ranges)) * row_bytes);
    ASSERT_TRUE(pack_rows(ranges, row_bytes, packed, contiguous).ok());
    std::vector<std::byte> restored = random_bytes(rng, packed.size());
    ASSERT_TRUE(unpack_rows(ranges, row_bytes, contiguous, restored).ok());
    // Rows named by a range come back exactly; the others keep what was there.
    std::size_t offset = 0;
    for (const RowRange& r : ranges) {
      const std::size_t begin = static_cast<std::size_t>(r.packed_row) * row_bytes;
      const std::size_t bytes = static_cast<std::size_t>(r.rows) * row_bytes;
      EXPECT_EQ(std::memcmp(restored.data() + begin, packed.data() + begin, bytes), 0) << "seed " << seed;
      EXPECT_EQ(std::memcmp(contiguous.data() + offset, packed.data() + begin, bytes), 0) << "seed " << seed;
      offset += bytes;
    }
  }
}

TEST(PackRows, ErrorsNameTheRange) {
  std::vector<std::byte> packed(40), contiguous(40);
  const std::vector<RowRange> outside{{0, 2}, {3, 3}};
  EXPECT_NE(pack_rows(outside, 8, packed, contiguous).message().find("ranges[1]"), std::string::npos);
  const std::vector<RowRange> overlapping{{0, 3}, {2, 2}};
  EXPECT_TRUE(pack_rows(overlapping, 8, packed, contiguous).ok());  // reading a row twice is fine
  EXPECT_NE(unpack_rows(overlapping, 8, contiguous, packed).message().find("overlap"), std::string::npos);
  EXPECT_NE(pack_rows(outside, 7, packed, contiguous).message().find("row_bytes"), std::string::npos);
  std::vector<std::byte> small(16);
  EXPECT_NE(pack_rows(std::vector<RowRange>{{0, 3}}, 8, packed, small).message().find("contiguous"),
            std::string::npos);
}

TEST(Gemm, MatchesNaive) {
  Rng rng(17);
  for (const auto& [m, n, k] : std::vector<std::array<std::int64_t, 3>>{{1, 1, 1}, {7, 5, 3}, {33, 17, 64}}) {
    std::vector<double> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n));
    for (double& x : a) x = rng.normal();
    for (double& x : b) x = rng.normal();
    std::vector<double> c(static_cast<std::size_t>(m * n), 123.0);
    ASSERT_TRUE(
        gemm(m, n, k, std::span<const double>(a), std::span<const double>(b), std::span<double>(c)).ok());
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        double expected = 0;
        for (std::int64_t p = 0; p < k; ++p)
          expected += a[static_cast<std::size_t>(i * k + p)] * b[static_cast<std::size_t>(p * n + j)];
        EXPECT_NEAR(c[static_cast<std::size_t>(i * n + j)], expected, 1e-12);
      }
    }
  }
  std::vector<float> a(6), b(6), c(5);
  EXPECT_NE(gemm(2, 2, 3, std::span<const float>(a), std::span<const float>(b), std::span<float>(c))
                .message()
                .find("c has"),
            std::string::npos);
}

TEST(Half, KnownValuesAndRounding) {
  EXPECT_EQ(float_to_bf16_bits(1.0f), 0x3F80);
  EXPECT_EQ(float_to_fp16_bits(1.0f), 0x3C00);
  EXPECT_EQ(float_to_fp16_bits(65504.0f), 0x7BFF);
  EXPECT_EQ(float_to_fp16_bits(65520.0f), 0x7C00);  // the tie above the largest half goes to infinity
  EXPECT_EQ(float_to_fp16_bits(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  // 1 + 2^-8 is halfway between two bf16 values: ties go to the even one (1.0).
  EXPECT_EQ(float_to_bf16_bits(1.0f + std::ldexp(1.0f, -8)), 0x3F80);
  EXPECT_EQ(float_to_bf16_bits(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);
  EXPECT_EQ(float_to_fp16_bits(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  EXPECT_EQ(float_to_fp16_bits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
}

TEST(Half, EveryPatternRoundTrips) {
  for (std::uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const auto h = static_cast<std::uint16_t>(bits);
    const float as_bf16 = bf16_bits_to_float(h);
    const float as_fp16 = fp16_bits_to_float(h);
    if (!std::isnan(as_bf16)) {
      ASSERT_EQ(float_to_bf16_bits(as_bf16), h) << std::hex << bits;
    }
    if (!std::isnan(as_fp16)) {
      ASSERT_EQ(float_to_fp16_bits(as_fp16), h) << std::hex << bits;
    }
  }
}

}  // namespace
}  // namespace zb::kernels
