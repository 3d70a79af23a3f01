// The GPU checks' per-element comparison (kernels/gpucheck/elementwise.hpp): it must fail on one bad
// element that a norm would forgive, name the worst element, and treat NaN poison and −inf exactly.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "kernels/gpucheck/elementwise.hpp"

namespace zb::kernels::gpucheck {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(Elementwise, OneBadElementFailsWhereTheNormWouldPass) {
  std::vector<double> ref(10000, 1.0), gpu(10000, 1.0);
  gpu[4321] = 1.2;  // relative Frobenius error 2e-3: under the old 1e-2 bound
  const ElementwiseResult r = compare_elementwise("O", gpu, ref, {0, 1e-2, 0}, 100);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.worst_index, 4321);
  EXPECT_NEAR(r.worst_ratio, 20.0, 1e-9);
  EXPECT_NE(r.detail.find("O[4321] (row 43, element 21)"), std::string::npos) << r.detail;
}

TEST(Elementwise, BoundIsAtolPlusRtolTimesReference) {
  const std::vector<double> ref{2.0, -4.0, 0.0};
  // atol 0.1 + 0.5·max|ref| = 2.1 plus rtol 0.25·|ref|.
  const Tolerance t{0.1, 0.25, 0.5};
  EXPECT_TRUE(compare_elementwise("x", std::vector<double>{2.0 + 2.6, -4.0 - 3.1, 2.1}, ref, t, 1).passed);
  const ElementwiseResult r = compare_elementwise("x", std::vector<double>{2.0, -4.0, 2.2}, ref, t, 1);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.worst_index, 2);
  EXPECT_NEAR(r.bound, 2.1, 1e-12);
}

TEST(Elementwise, PoisonAndInfinitiesMustMatchExactly) {
  const std::vector<double> ref{kNaN, -kInf, 1.0};
  EXPECT_TRUE(compare_elementwise("LSE", std::vector<double>{kNaN, -kInf, 1.0}, ref, {1e-3, 0, 0}, 1).passed);
  const ElementwiseResult unwritten =
      compare_elementwise("LSE", std::vector<double>{0.0, -kInf, 1.0}, ref, {1, 0, 0}, 1);
  EXPECT_FALSE(unwritten.passed);
  EXPECT_NE(unwritten.detail.find("NaN poison"), std::string::npos) << unwritten.detail;
  EXPECT_FALSE(
      compare_elementwise("LSE", std::vector<double>{kNaN, -1e30, 1.0}, ref, {1e31, 0, 0}, 1).passed);
  EXPECT_FALSE(
      compare_elementwise("LSE", std::vector<double>{kNaN, -kInf, kNaN}, ref, {1e9, 0, 0}, 1).passed);
  EXPECT_FALSE(
      compare_elementwise("LSE", std::vector<double>{kNaN}, ref, {1, 0, 0}, 1).passed);  // sizes differ
}

}  // namespace
}  // namespace zb::kernels::gpucheck
