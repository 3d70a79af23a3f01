// The one rule by which every backend cuts a message's real payload into its legs
// (core/lower/payload_fragment.hpp): the sender of a leg and its receiver compute it apart, so it must
// tile the payload exactly, whatever the sizes.
#include "core/lower/payload_fragment.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace zb::lower {
namespace {

TEST(PayloadFragment, LegsOfTheModelledSizeTileThePayload) {
  Message m;
  m.bytes = 1000;
  EXPECT_EQ(payload_fragment(m, 333, 0, 400).begin, 0);
  EXPECT_EQ(payload_fragment(m, 333, 0, 400).end, payload_fragment(m, 333, 400, 600).begin);
  EXPECT_EQ(payload_fragment(m, 333, 400, 600).end, 333);
}

TEST(PayloadFragment, AMessagePricedAtNothingCarriesItsWholePayloadInOneLeg) {
  Message m;
  m.bytes = 0;
  EXPECT_EQ(payload_fragment(m, 333, 0, 0).begin, 0);
  EXPECT_EQ(payload_fragment(m, 333, 0, 0).size(), 333);
}

TEST(PayloadFragment, OffsetsOutsideTheMessageAreClampedToIt) {
  Message m;
  m.bytes = 100;
  EXPECT_EQ(payload_fragment(m, 50, -20, 10).size(), 0);
  EXPECT_EQ(payload_fragment(m, 50, 90, 1000).end, 50);
}

TEST(PayloadFragment, GigabytePayloadsAndOffsetsDoNotOverflow) {
  Message m;
  m.bytes = std::int64_t{48} << 30;  // 48 GiB modelled
  const std::int64_t payload = std::int64_t{40} << 30;
  const ByteRange half = payload_fragment(m, payload, 0, m.bytes / 2);
  EXPECT_EQ(half.end, payload / 2);
  EXPECT_EQ(payload_fragment(m, payload, m.bytes / 2, m.bytes / 2).end, payload);
}

// Property over random splits: any cut of the modelled size into consecutive legs cuts the payload into
// consecutive, non-negative ranges that start at 0 and end at the payload's size.
TEST(PayloadFragment, AnySplitIntoConsecutiveLegsTilesThePayload) {
  for (std::uint32_t seed = 1; seed <= 200; ++seed) {
    std::mt19937_64 rng(seed);
    Message m;
    m.bytes = std::uniform_int_distribution<std::int64_t>(1, std::int64_t{1} << 40)(rng);
    const std::int64_t payload = std::uniform_int_distribution<std::int64_t>(0, std::int64_t{1} << 36)(rng);
    const int legs = std::uniform_int_distribution<int>(1, 9)(rng);
    std::vector<std::int64_t> cuts{0, m.bytes};
    for (int i = 1; i < legs; ++i)
      cuts.push_back(std::uniform_int_distribution<std::int64_t>(0, m.bytes)(rng));
    std::sort(cuts.begin(), cuts.end());
    std::int64_t covered = 0;
    for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
      const ByteRange r = payload_fragment(m, payload, cuts[i], cuts[i + 1] - cuts[i]);
      ASSERT_EQ(r.begin, covered) << "seed " << seed << " leg " << i;
      ASSERT_GE(r.size(), 0) << "seed " << seed << " leg " << i;
      covered = r.end;
    }
    EXPECT_EQ(covered, payload) << "seed " << seed;
  }
}

}  // namespace
}  // namespace zb::lower
