// The Mann–Whitney U test against scipy.stats.mannwhitneyu (scipy 1.17.1, alternative="two-sided",
// method "exact" or "asymptotic" as named), and the sample aggregates.
#include <gtest/gtest.h>

#include "reports/sample_statistics.hpp"

namespace zb::reports {
namespace {

struct ScipyCase {
  const char* name;
  std::vector<double> first;
  std::vector<double> second;
  UTestMethod method;
  double u;  // scipy's statistic: U of the first sample
  double p;
};

std::vector<double> arithmetic(double start, double step, int count) {
  std::vector<double> out;
  for (int i = 0; i < count; ++i) out.push_back(start + step * i);
  return out;
}

std::vector<double> modular(int count, int factor, int modulus, double offset) {
  std::vector<double> out;
  for (int i = 0; i < count; ++i) out.push_back(static_cast<double>(i * factor % modulus) + offset);
  return out;
}

TEST(MannWhitney, MatchesScipy) {
  const std::vector<ScipyCase> cases{
      {"exact 3v3 separated", {1, 2, 3}, {4, 5, 6}, UTestMethod::exact, 0.0, 0.1},
      {"exact 5v5 separated",
       {1.1, 2.2, 3.3, 4.4, 5.5},
       {6, 7, 8, 9, 10.5},
       UTestMethod::exact,
       0.0,
       0.007936507936507936},
      {"exact 7v8 interleaved",
       {1.0, 3.1, 4.2, 6.0, 8.5, 9.1, 12.0},
       {2.0, 5.5, 7.0, 7.5, 10.0, 11.0, 13.5, 14.0},
       UTestMethod::exact,
       18.0,
       0.280963480963481},
      {"exact 10v10", arithmetic(1.0, 0.1, 10), arithmetic(1.25, 0.1, 10), UTestMethod::exact, 28.0,
       0.10512243174781875},
      {"exact 20v20", arithmetic(1.0, 0.01, 20), arithmetic(1.0537, 0.0107, 20), UTestMethod::exact, 100.0,
       0.006144955649235766},
      {"ties 4v5 (normal, tie-corrected)",
       {1, 2, 2, 3},
       {2, 3, 3, 4, 5},
       UTestMethod::normal,
       3.0,
       0.09934224785346528},
      {"normal 30v30", modular(30, 7, 31, 0.0), modular(30, 11, 37, 0.5), UTestMethod::normal, 367.0,
       0.22257289646656508},
  };
  for (const ScipyCase& c : cases) {
    SCOPED_TRACE(c.name);
    const MannWhitneyResult r = mann_whitney_u(c.first, c.second);
    EXPECT_EQ(r.method, c.method);
    EXPECT_DOUBLE_EQ(r.u, c.u);
    EXPECT_NEAR(r.p_value, c.p, 1e-12 + 1e-9 * c.p);
  }
}

TEST(MannWhitney, ManyTiesAcrossLargeSamplesUseNormalApproximation) {
  // scipy: a = [100 + (i*37) % 25], b = [103 + (i*53) % 30 * 0.9], asymptotic → U = 268.5, p =
  // 0.07316116584071336.
  std::vector<double> a, b;
  for (int i = 0; i < 25; ++i) a.push_back(100 + (i * 37) % 25);
  for (int i = 0; i < 30; ++i) b.push_back(103 + ((i * 53) % 30) * 0.9);
  const MannWhitneyResult r = mann_whitney_u(a, b);
  EXPECT_EQ(r.method, UTestMethod::normal);
  EXPECT_DOUBLE_EQ(r.u, 268.5);
  EXPECT_NEAR(r.p_value, 0.07316116584071336, 1e-6);
}

TEST(MannWhitney, IsSymmetricInItsSamples) {
  const std::vector<double> a{1.0, 3.1, 4.2, 6.0}, b{2.0, 5.5, 7.0};
  EXPECT_DOUBLE_EQ(mann_whitney_u(a, b).p_value, mann_whitney_u(b, a).p_value);
  EXPECT_DOUBLE_EQ(mann_whitney_u(a, b).u + mann_whitney_u(b, a).u, 12.0);
}

TEST(MannWhitney, DegenerateInputsGiveNoEvidence) {
  EXPECT_DOUBLE_EQ(mann_whitney_u({}, {1, 2}).p_value, 1.0);
  EXPECT_DOUBLE_EQ(mann_whitney_u({5, 5, 5}, {5, 5, 5, 5}).p_value, 1.0);  // all equal: zero variance
}

TEST(MannWhitney, SmallestExactPValue) {
  EXPECT_DOUBLE_EQ(smallest_exact_p_value(3, 3), 0.1);  // 2 / C(6, 3)
  EXPECT_NEAR(smallest_exact_p_value(5, 5), 2.0 / 252, 1e-15);
  EXPECT_DOUBLE_EQ(smallest_exact_p_value(1, 1), 1.0);
}

TEST(SampleAggregates, MeanSdMedianMinMax) {
  const SampleAggregates a = aggregate({3, 1, 2, 10});
  EXPECT_EQ(a.count, 4);
  EXPECT_DOUBLE_EQ(a.mean, 4.0);
  EXPECT_DOUBLE_EQ(a.median, 2.5);
  EXPECT_DOUBLE_EQ(a.min, 1.0);
  EXPECT_DOUBLE_EQ(a.max, 10.0);
  EXPECT_NEAR(a.sd, 4.08248290463863, 1e-12);  // sample sd (n − 1)
  EXPECT_DOUBLE_EQ(aggregate({7}).sd, 0.0);
  EXPECT_EQ(aggregate({}).count, 0);
}

}  // namespace
}  // namespace zb::reports
