// Samplers: the splice of the Pareto tail, uniform/fixed bounds, mixture weights, empirical draws and
// the validation of distribution parameters.
#include "core/workload/samplers.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/common/error.hpp"
#include "core/workload/inverse_normal.hpp"
#include "core/workload/stats.hpp"
#include "test_helpers.hpp"

namespace zb {
namespace {

using testing::draw_many;

DistributionSpec lognormal_spec(double median, double sigma, std::optional<double> alpha = {},
                                double from = 0.95) {
  DistributionSpec spec;
  spec.kind = "lognormal";
  spec.median = median;
  spec.sigma = sigma;
  spec.tail_alpha = alpha;
  spec.tail_from = from;
  return spec;
}

TEST(LognormalTailSampler, TailStartsExactlyAtTheBodyQuantile) {
  const LognormalTailSampler sampler(lognormal_spec(347, 1.41, 1.55, 0.95));
  const double expected_start = 347 * std::exp(1.41 * inverse_normal_cdf(0.95));
  EXPECT_DOUBLE_EQ(sampler.tail_start(), expected_start);
  // Continuous at the splice: the body just below and the tail at tail_from meet.
  EXPECT_DOUBLE_EQ(sampler.quantile(0.95), expected_start);
  EXPECT_NEAR(sampler.quantile(0.95 - 1e-12), expected_start, expected_start * 1e-9);
  // Pareto quantile: x_min · (1 − v)^(−1/α) with v = (0.99 − 0.95) / 0.05 = 0.8.
  EXPECT_NEAR(sampler.quantile(0.99), expected_start * std::pow(0.2, -1.0 / 1.55), 1e-6);
}

TEST(LognormalTailSampler, BodyQuantilesAreLognormal) {
  const LognormalTailSampler sampler(lognormal_spec(500, 1.0));
  EXPECT_DOUBLE_EQ(sampler.quantile(0.5), 500.0);
  EXPECT_NEAR(sampler.quantile(0.9), 500 * std::exp(1.2815515655446004), 1e-9);
  EXPECT_TRUE(std::isinf(sampler.tail_start()));
}

TEST(LognormalTailSampler, SampleMedianAndMeanMatchTheory) {
  const LognormalTailSampler sampler(lognormal_spec(1000, 0.5));
  const auto stats = compute_length_stats(draw_many(sampler, 100000, 3));
  EXPECT_NEAR(stats.quantiles.p50, 1000, 15);
  EXPECT_NEAR(stats.mean, sampler.mean(), 0.01 * sampler.mean());  // m·e^{σ²/2} = 1133
  EXPECT_NEAR(sampler.mean(), 1000 * std::exp(0.125), 1e-9);
}

TEST(LognormalTailSampler, MeanIsInfiniteForAlphaAtMostOne) {
  EXPECT_TRUE(std::isinf(LognormalTailSampler(lognormal_spec(100, 1, 1.0)).mean()));
  EXPECT_TRUE(std::isfinite(LognormalTailSampler(lognormal_spec(100, 1, 1.01)).mean()));
}

TEST(LognormalTailSampler, DrawsStayPositiveAndCapped) {
  // α = 0.3 makes astronomically long draws likely; they must be capped, never overflow.
  const LognormalTailSampler sampler(lognormal_spec(10, 3.0, 0.3, 0.5));
  for (const auto length : draw_many(sampler, 20000, 9)) {
    ASSERT_GE(length, 1);
    ASSERT_LE(length, kMaxDocumentLength);
  }
  // The cap is the longest document this build plans, 2^30 tokens (core/config/document_limit.hpp).
  EXPECT_EQ(to_document_length(1e300), std::int64_t{1} << 30);
  EXPECT_EQ(to_document_length(static_cast<double>(kMaxDocumentLength) + 0.4), kMaxDocumentLength);
}

TEST(LognormalTailSampler, RejectsBadParametersNamingTheKey) {
  const auto expect_bad = [](const DistributionSpec& spec, const std::string& key) {
    try {
      (void)LognormalTailSampler{spec};
      FAIL() << "no error for " << key;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::bad_input);
      EXPECT_NE(std::string(e.what()).find("workload.distribution." + key), std::string::npos) << e.what();
    }
  };
  expect_bad(lognormal_spec(0, 1), "median");
  expect_bad(lognormal_spec(100, -1), "sigma");
  expect_bad(lognormal_spec(100, 1, 0.0), "tail_alpha");
  expect_bad(lognormal_spec(100, 1, 1.5, 1.0), "tail_from");
  expect_bad(lognormal_spec(100, 1, 1.5, 0.0), "tail_from");
}

TEST(UniformSampler, CoversTheClosedRangeOnly) {
  const UniformSampler sampler(5, 8);
  const auto lengths = draw_many(sampler, 4000, 1);
  EXPECT_EQ(*std::min_element(lengths.begin(), lengths.end()), 5);
  EXPECT_EQ(*std::max_element(lengths.begin(), lengths.end()), 8);
  EXPECT_THROW(UniformSampler(0, 8), Error);
  EXPECT_THROW(UniformSampler(9, 8), Error);
}

TEST(FixedSampler, AlwaysGivesTheValue) {
  const FixedSampler sampler(4096);
  for (const auto length : draw_many(sampler, 100, 1)) EXPECT_EQ(length, 4096);
  EXPECT_THROW(FixedSampler(0), Error);
}

TEST(MixtureSampler, PicksComponentsByWeight) {
  std::vector<MixtureSampler::Component> components;
  components.push_back({"short", std::make_shared<FixedSampler>(1), 3.0});
  components.push_back({"long", std::make_shared<FixedSampler>(100), 1.0});
  const MixtureSampler mixture(std::move(components));
  EXPECT_DOUBLE_EQ(mixture.components()[0].weight, 0.75);  // normalised
  const auto lengths = draw_many(mixture, 100000, 5);
  const auto long_count = std::count(lengths.begin(), lengths.end(), 100);
  EXPECT_NEAR(static_cast<double>(long_count) / 100000.0, 0.25, 0.005);
}

TEST(MixtureSampler, RejectsUnusableWeights) {
  std::vector<MixtureSampler::Component> zero;
  zero.push_back({"a", std::make_shared<FixedSampler>(1), 0.0});
  EXPECT_THROW(MixtureSampler{std::move(zero)}, Error);
  std::vector<MixtureSampler::Component> negative;
  negative.push_back({"a", std::make_shared<FixedSampler>(1), -1.0});
  EXPECT_THROW(MixtureSampler{std::move(negative)}, Error);
}

TEST(EmpiricalSampler, DrawsEveryLengthUniformly) {
  const EmpiricalSampler sampler({10, 20, 30, 40}, "inline");
  const auto lengths = draw_many(sampler, 40000, 2);
  for (const std::int64_t value : {10, 20, 30, 40}) {
    const auto n = std::count(lengths.begin(), lengths.end(), value);
    EXPECT_NEAR(static_cast<double>(n), 10000.0, 400.0) << value;
  }
  EXPECT_THROW(EmpiricalSampler({}, "empty"), Error);
}

TEST(DistributionFactory, BuildsEachKindAndRejectsUnknownOnes) {
  DistributionSpec spec;
  spec.kind = "fixed";
  spec.value = 7;
  EXPECT_EQ(draw_many(*make_distribution_sampler(spec), 1, 1).front(), 7);
  EXPECT_DOUBLE_EQ(analytic_mean(spec), 7.0);
  spec.kind = "uniform";
  spec.min = 10;
  spec.max = 20;
  EXPECT_DOUBLE_EQ(analytic_mean(spec), 15.0);
  spec.kind = "zipf";
  EXPECT_THROW((void)make_distribution_sampler(spec), Error);
}

TEST(UniformOpen01, NeverReturnsZeroOrOne) {
  Rng rng(11);
  for (int i = 0; i < 100000; ++i) {
    const double u = uniform_open01(rng);
    ASSERT_GT(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

}  // namespace
}  // namespace zb
