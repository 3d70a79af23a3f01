// calibrate's fits recover the constants that generated the times, in the cost model's own forms: exactly
// from exact times, closely from noisy ones, and never a negative constant.
#include <gtest/gtest.h>

#include <cmath>

#include "core/common/rng.hpp"
#include "core/config/presets.hpp"
#include "core/cost/cost_model.hpp"
#include "core/qualify/profile_fit.hpp"

namespace zb::qualify {
namespace {

constexpr double kPeak = 312e12;

struct Truth {
  double efficiency, half, overhead;
  [[nodiscard]] double seconds(double flops, double rows) const {
    return flops / (kPeak * efficiency * rows / (rows + half)) + overhead;
  }
};

Truth random_truth(Rng& rng) {
  return {1e-6 + 1e-3 * rng.uniform(), 500 * rng.uniform(), 1e-5 * rng.uniform()};
}

std::vector<KernelPoint> attention_points(const Truth& truth, Rng& rng, double noise) {
  std::vector<KernelPoint> points;
  for (const double rows : {64.0, 128.0, 256.0, 512.0, 1024.0, 2048.0}) {
    const double flops = 4.0 * 512 * rows * (rows + 1) / 2;
    points.push_back({flops, rows, truth.seconds(flops, rows) * (1 + noise * rng.normal())});
  }
  return points;
}

TEST(ProfileFit, ExactTimesGiveBackTheConstantsOverRandomSeeds) {
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    Rng rng(seed, 11);
    const Truth truth = random_truth(rng);
    const KernelFit fit = fit_kernel(attention_points(truth, rng, 0.0), kPeak);
    EXPECT_NEAR(fit.efficiency / truth.efficiency, 1.0, 1e-6) << "seed " << seed;
    EXPECT_NEAR(fit.half_rows, truth.half, 1e-6 * std::max(1.0, truth.half)) << "seed " << seed;
    EXPECT_NEAR(fit.overhead, truth.overhead, 1e-9) << "seed " << seed;
    EXPECT_LT(fit.rms_residual(), 1e-9) << "seed " << seed;
  }
}

TEST(ProfileFit, NoisyTimesGiveConstantsThatPredictThemWithinTheNoise) {
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    Rng rng(seed, 12);
    const Truth truth = random_truth(rng);
    const std::vector<KernelPoint> points = attention_points(truth, rng, 0.03);
    const KernelFit fit = fit_kernel(points, kPeak);
    EXPECT_GE(fit.half_rows, 0.0);
    EXPECT_GE(fit.overhead, 0.0);
    EXPECT_GT(fit.efficiency, 0.0);
    EXPECT_LT(fit.rms_residual(), 0.1) << "seed " << seed;
    // The fitted curve prices a large call as the true one does, within a few times the noise.
    const double rows = 4096, flops = 4.0 * 512 * rows * (rows + 1) / 2;
    EXPECT_NEAR(fit.predict(flops, rows, kPeak) / truth.seconds(flops, rows), 1.0, 0.12) << "seed " << seed;
  }
}

TEST(ProfileFit, ANegativeTermIsDroppedRatherThanWritten) {
  // Times with no shape or overhead term at all, but noise that an unconstrained fit turns into a small
  // negative overhead: the constants written must stay in the profile's ranges.
  std::vector<KernelPoint> points;
  for (const double rows : {100.0, 1000.0, 10000.0})
    points.push_back({rows * 1e9, rows, rows * 1e9 / (kPeak * 1e-4)});
  points[0].seconds *= 0.97;
  const KernelFit fit = fit_kernel(points, kPeak);
  EXPECT_GE(fit.overhead, 0.0);
  EXPECT_GE(fit.half_rows, 0.0);
  EXPECT_NEAR(fit.efficiency, 1e-4, 1e-5);
}

TEST(ProfileFit, BackwardFactorIsTheTimeRatioTheForwardCurveNeeds) {
  Rng rng(5, 13);
  const Truth truth = random_truth(rng);
  const KernelFit forward = fit_kernel(attention_points(truth, rng, 0.0), kPeak);
  std::vector<KernelPoint> backward;
  for (const KernelPoint& p : attention_points(truth, rng, 0.0))
    backward.push_back({p.flops, p.rows, truth.seconds(3.1 * p.flops, p.rows)});
  const FactorFit fit = fit_backward_factor(backward, forward, kPeak);
  EXPECT_NEAR(fit.factor, 3.1, 1e-6);
  EXPECT_LT(fit.rms_residual(), 1e-9);
}

TEST(ProfileFit, LinkFitGivesBandwidthAndLatency) {
  std::vector<TransferPoint> points;
  for (const double bytes : {65536.0, 1048576.0, 8388608.0}) points.push_back({bytes, 40e-6 + bytes / 600e6});
  const LinkFit fit = fit_link(points);
  EXPECT_NEAR(fit.bandwidth / 600e6, 1.0, 1e-9);
  EXPECT_NEAR(fit.latency, 40e-6, 1e-12);
  EXPECT_THROW((void)fit_link({{1024.0, 1e-5}}), Error);  // one size cannot tell latency from bandwidth
}

// The fitted constants, put in a profile, make the cost model price the measured calls: the fit is in the
// cost model's own form, not a look-alike.
TEST(ProfileFit, ACalibratedProfileMakesTheCostModelReproduceTheMeasurements) {
  Rng rng(9, 14);
  const Truth truth = random_truth(rng);
  const std::vector<KernelPoint> points = attention_points(truth, rng, 0.0);
  const KernelFit fit = fit_kernel(points, kPeak);
  HardwareProfile profile;
  profile.attention_efficiency = fit.efficiency;
  profile.attention_half_tokens = fit.half_rows;
  profile.attention_call_overhead = fit.overhead;
  profile.sustained_compute_fraction = 1.0;  // as calibrate writes it: the kernels at their measured rates
  ClusterSpec cluster = find_cluster_preset("a800-4nic")->spec;
  cluster.gpu.peak_flops = kPeak;
  const CostModel cost(cluster, find_model_preset("llama-7b")->spec, profile);
  for (const KernelPoint& p : points)
    EXPECT_NEAR(cost.attention_time(p.flops, p.rows) / p.seconds, 1.0, 1e-9);
}

}  // namespace
}  // namespace zb::qualify
