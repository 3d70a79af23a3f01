// Length statistics against values computed by hand.
#include "core/workload/stats.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace zb {
namespace {

// Unsorted on purpose: the statistics must not depend on the order.
const std::vector<std::int64_t> kLengths = {40000, 3, 1, 10000, 4, 2};

TEST(LengthStats, CountMeanMinMax) {
  const auto stats = compute_length_stats(kLengths);
  EXPECT_EQ(stats.count, 6);
  EXPECT_EQ(stats.total_tokens, 50010);
  EXPECT_DOUBLE_EQ(stats.mean, 50010.0 / 6.0);
  EXPECT_EQ(stats.min, 1);
  EXPECT_EQ(stats.max, 40000);
}

TEST(LengthStats, QuantilesInterpolateBetweenRanks) {
  // Sorted: 1 2 3 4 10000 40000; h = 5p; value = x[⌊h⌋] + frac(h)·(x[⌊h⌋+1] − x[⌊h⌋]).
  const auto q = compute_length_stats(kLengths).quantiles;
  EXPECT_DOUBLE_EQ(q.p10, 1.5);      // h = 0.5
  EXPECT_DOUBLE_EQ(q.p25, 2.25);     // h = 1.25
  EXPECT_DOUBLE_EQ(q.p50, 3.5);      // h = 2.5
  EXPECT_DOUBLE_EQ(q.p75, 7501.0);   // h = 3.75: 4 + 0.75·9996
  EXPECT_DOUBLE_EQ(q.p90, 25000.0);  // h = 4.5: 10000 + 0.5·30000
  EXPECT_DOUBLE_EQ(q.p95, 32500.0);
  EXPECT_DOUBLE_EQ(q.p99, 38500.0);
  EXPECT_DOUBLE_EQ(q.p999, 39850.0);
}

TEST(LengthStats, SharesAboveDefaultThresholds) {
  const auto stats = compute_length_stats(kLengths);
  ASSERT_EQ(stats.above.size(), 2u);
  const double squares = 1.0 + 4.0 + 9.0 + 16.0 + 1e8 + 1.6e9;
  EXPECT_EQ(stats.above[0].threshold, 4096);
  EXPECT_DOUBLE_EQ(stats.above[0].sequences, 2.0 / 6.0);
  EXPECT_DOUBLE_EQ(stats.above[0].tokens, 50000.0 / 50010.0);
  EXPECT_DOUBLE_EQ(stats.above[0].attention, 1.7e9 / squares);
  EXPECT_EQ(stats.above[1].threshold, 32768);
  EXPECT_DOUBLE_EQ(stats.above[1].sequences, 1.0 / 6.0);
  EXPECT_DOUBLE_EQ(stats.above[1].tokens, 40000.0 / 50010.0);
  EXPECT_DOUBLE_EQ(stats.above[1].attention, 1.6e9 / squares);
}

TEST(LengthStats, ThresholdsAreConfigurableAndStrict) {
  const std::vector<std::int64_t> thresholds = {4, 0, 40000};
  const auto stats = compute_length_stats(kLengths, thresholds);
  ASSERT_EQ(stats.above.size(), 3u);
  EXPECT_DOUBLE_EQ(stats.above[0].sequences, 2.0 / 6.0);  // 4 itself is not above 4
  EXPECT_DOUBLE_EQ(stats.above[1].sequences, 1.0);
  EXPECT_DOUBLE_EQ(stats.above[1].attention, 1.0);
  EXPECT_DOUBLE_EQ(stats.above[2].sequences, 0.0);
  EXPECT_DOUBLE_EQ(stats.above[2].tokens, 0.0);
}

TEST(LengthStats, SingleValueAndEmptyInput) {
  const std::vector<std::int64_t> one = {777};
  const auto single = compute_length_stats(one);
  EXPECT_DOUBLE_EQ(single.quantiles.p10, 777.0);
  EXPECT_DOUBLE_EQ(single.quantiles.p999, 777.0);

  const auto empty = compute_length_stats({});
  EXPECT_EQ(empty.count, 0);
  EXPECT_EQ(empty.total_tokens, 0);
  EXPECT_EQ(empty.above.size(), 2u);
}

TEST(LengthStats, SquaresOfMillionTokenDocumentsDoNotOverflow) {
  const std::vector<std::int64_t> huge = {std::int64_t{1} << 40, std::int64_t{1} << 40, 1};
  const auto stats = compute_length_stats(huge);
  EXPECT_NEAR(stats.above[1].attention, 1.0, 1e-12);
  EXPECT_GT(stats.above[1].attention, 0.0);
}

TEST(LengthStats, FormatMentionsEveryPart) {
  const std::string text = format_length_stats(compute_length_stats(kLengths));
  EXPECT_NE(text.find("6 sequences"), std::string::npos) << text;
  EXPECT_NE(text.find("p99.9 39850"), std::string::npos) << text;
  EXPECT_NE(text.find("> 32768"), std::string::npos) << text;
}

TEST(QuantileOfSorted, EndpointsAreMinAndMax) {
  const std::vector<std::int64_t> sorted = {3, 9, 27};
  EXPECT_DOUBLE_EQ(quantile_of_sorted(sorted, 0.0), 3.0);
  EXPECT_DOUBLE_EQ(quantile_of_sorted(sorted, 1.0), 27.0);
  EXPECT_DOUBLE_EQ(quantile_of_sorted(sorted, 0.75), 18.0);  // h = 1.5
}

}  // namespace
}  // namespace zb
