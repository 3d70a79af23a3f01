// Φ⁻¹ by AS241: reference values, symmetry, round trips through Φ, and the edges.
#include "core/workload/inverse_normal.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace zb {
namespace {

TEST(InverseNormalCdf, MatchesReferenceValues) {
  // Reference values to 16 digits (Wolfram: InverseCDF[NormalDistribution[], p]).
  EXPECT_DOUBLE_EQ(inverse_normal_cdf(0.5), 0.0);
  EXPECT_NEAR(inverse_normal_cdf(0.975), 1.959963984540054, 1e-14);
  EXPECT_NEAR(inverse_normal_cdf(0.95), 1.644853626951472, 1e-14);
  EXPECT_NEAR(inverse_normal_cdf(0.9), 1.281551565544601, 1e-14);
  EXPECT_NEAR(inverse_normal_cdf(0.001), -3.090232306167814, 1e-13);
  EXPECT_NEAR(inverse_normal_cdf(1e-10), -6.361340902404056, 1e-12);  // AS241's far-tail branch
}

TEST(InverseNormalCdf, IsAntisymmetric) {
  for (const double p : {0.01, 0.1, 0.3, 0.42, 0.49, 1e-6, 0x1.0p-40}) {  // 1 − p exact in double
    EXPECT_NEAR(inverse_normal_cdf(p), -inverse_normal_cdf(1.0 - p), 1e-9) << "p = " << p;
  }
}

TEST(InverseNormalCdf, InvertsTheNormalCdf) {
  for (double z = -8.0; z <= 8.0; z += 0.125) {
    const double p = normal_cdf(z);
    // Above z ≈ 5, 1 − p loses digits in double; compare there through the mirrored lower tail.
    const double back = z <= 0 ? inverse_normal_cdf(p) : -inverse_normal_cdf(normal_cdf(-z));
    EXPECT_NEAR(back, z, 1e-9 * std::max(1.0, std::fabs(z))) << "z = " << z;
  }
}

TEST(InverseNormalCdf, IsMonotoneAcrossBranchBoundaries) {
  // The three rational approximations meet at |p − 0.5| = 0.425 and at r = 5; no step backwards there.
  double previous = inverse_normal_cdf(1e-300);
  for (double p = 1e-300; p < 0.5; p *= 1.5) {
    const double x = inverse_normal_cdf(p);
    EXPECT_GE(x, previous) << "p = " << p;
    previous = x;
  }
  EXPECT_LT(inverse_normal_cdf(0.0749999), inverse_normal_cdf(0.0750001));
}

TEST(InverseNormalCdf, ReturnsInfinitiesAtTheEdges) {
  EXPECT_EQ(inverse_normal_cdf(0.0), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(inverse_normal_cdf(1.0), std::numeric_limits<double>::infinity());
  EXPECT_EQ(inverse_normal_cdf(-1.0), -std::numeric_limits<double>::infinity());
}

}  // namespace
}  // namespace zb
