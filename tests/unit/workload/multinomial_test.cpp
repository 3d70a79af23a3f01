// The count samplers under the MoE router (core/workload/multinomial.hpp): binomial draws with the right
// mean and spread in both regimes (exact inversion, normal approximation), and capped multinomials that
// place every item, respect the cap and never give an item to an outcome of weight 0.
#include "core/workload/multinomial.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace zb {
namespace {

struct Moments {
  double mean = 0;
  double variance = 0;
};

Moments binomial_moments(std::int64_t n, double p, std::uint64_t seed, int draws = 20000) {
  Rng rng(seed);
  double sum = 0, sum_sq = 0;
  for (int i = 0; i < draws; ++i) {
    const auto x = static_cast<double>(binomial(rng, n, p));
    sum += x;
    sum_sq += x * x;
  }
  const double mean = sum / draws;
  return {mean, sum_sq / draws - mean * mean};
}

TEST(Binomial, MeanAndVarianceMatchInBothRegimes) {
  struct Case {
    std::int64_t n;
    double p;
  };
  // Exact (mean below 30), approximate (above), and p above 1/2 through the symmetry.
  for (const Case c : {Case{10, 0.3}, Case{1000, 0.01}, Case{100000, 0.2}, Case{5000, 0.9}, Case{40, 0.75}}) {
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      const Moments m = binomial_moments(c.n, c.p, seed);
      const double mean = c.n * c.p, variance = c.n * c.p * (1 - c.p);
      SCOPED_TRACE(testing::Message() << "n " << c.n << " p " << c.p << " seed " << seed);
      EXPECT_NEAR(m.mean, mean, 5 * std::sqrt(variance / 20000));
      EXPECT_NEAR(m.variance / variance, 1.0, 0.06);
    }
  }
}

TEST(Binomial, EdgesAreExact) {
  Rng rng(1);
  EXPECT_EQ(binomial(rng, 0, 0.5), 0);
  EXPECT_EQ(binomial(rng, 100, 0), 0);
  EXPECT_EQ(binomial(rng, 100, 1), 100);
  EXPECT_EQ(binomial(rng, 100, -0.5), 0);
  for (int i = 0; i < 1000; ++i) {
    const std::int64_t x = binomial(rng, 7, 0.5);
    EXPECT_GE(x, 0);
    EXPECT_LE(x, 7);
  }
}

TEST(CappedMultinomial, PlacesEveryItemWithinTheCapOverRandomSeeds) {
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    Rng rng(seed, 5);
    std::vector<double> weights(1 + rng.below(64));
    for (double& w : weights) w = rng.below(4) == 0 ? 0.0 : std::pow(rng.uniform(), 3);
    weights[rng.below(weights.size())] = 1;  // some weight is positive
    const std::int64_t cap = static_cast<std::int64_t>(rng.below(10000));
    std::int64_t positive = 0;
    for (double w : weights) positive += w > 0;
    // As many items as the positive outcomes can take, so weight-0 outcomes never need to take any.
    const std::int64_t n =
        positive * cap == 0
            ? 0
            : static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(positive * cap) + 1));
    const std::vector<std::int64_t> counts = capped_multinomial(rng, n, weights, cap);
    SCOPED_TRACE(seed);
    EXPECT_EQ(std::accumulate(counts.begin(), counts.end(), std::int64_t{0}), n);
    for (std::size_t i = 0; i < counts.size(); ++i) {
      EXPECT_GE(counts[i], 0);
      EXPECT_LE(counts[i], cap);
      if (weights[i] == 0) {
        EXPECT_EQ(counts[i], 0) << "outcome " << i;
      }
    }
  }
}

TEST(CappedMultinomial, SharesFollowTheWeightsBelowTheCap) {
  Rng rng(11);
  const std::vector<double> weights = {1, 2, 3, 4};
  const std::vector<std::int64_t> counts = capped_multinomial(rng, 1'000'000, weights, 1'000'000);
  for (std::size_t i = 0; i < weights.size(); ++i)
    EXPECT_NEAR(static_cast<double>(counts[i]) / 1e6, weights[i] / 10, 0.003);
}

TEST(CappedMultinomial, RefusesWhatCannotFit) {
  Rng rng(1);
  const std::vector<double> weights = {1, 1};
  EXPECT_THROW((void)capped_multinomial(rng, 5, weights, 2), std::invalid_argument);
  EXPECT_THROW((void)capped_multinomial(rng, -1, weights, 2), std::invalid_argument);
  EXPECT_THROW((void)capped_multinomial(rng, 1, std::vector<double>{0, 0}, 2), std::invalid_argument);
}

}  // namespace
}  // namespace zb
