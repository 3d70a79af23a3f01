// The planner's cost model under `planner_error` (docs/METRICS.md, "Planner error"): every time term is
// the exact one times 1 + e·z with |z| ≤ 1, z drawn from the seed, the term and the octave of its size
// and interpolated between octaves; e = 0 is the exact model, bit for bit; what is not a time (FLOPs,
// bytes, memory) is never perturbed.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/cost/cost_model.hpp"
#include "tests/unit/cost/cost_test_specs.hpp"

namespace zb {
namespace {

// Every perturbed term of `cost` at a spread of sizes, in a fixed order.
std::vector<double> terms(const CostModel& cost) {
  std::vector<double> out;
  for (double x = 37; x < 3e6; x *= 1.37) {
    out.push_back(cost.attention_time(cost.attention_fwd_flops(x * x / 2), x));
    out.push_back(cost.gemm_time(x, 4096, 4096));
    out.push_back(cost.linear_fwd_time(x));
    out.push_back(cost.linear_bwd_time(x));
    out.push_back(cost.transfer_time(x * 1024, cost.nvlink(), LinkClass::nvlink));
    out.push_back(cost.transfer_time(x * 1024, cost.nic_per_gpu(), LinkClass::nic));
  }
  return out;
}

CostModel exact() {
  return CostModel(test::dgx_h200(2), test::llama_7b());
}

TEST(PlannerError, ZeroIsTheExactModel) {
  EXPECT_EQ(terms(exact().with_planner_error({0.0, 99})), terms(exact()));
}

TEST(PlannerError, EveryTimeTermStaysWithinTheErrorAndSomeUseMostOfIt) {
  for (const double e : {0.05, 0.1}) {
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
      const std::vector<double> noisy = terms(exact().with_planner_error({e, seed}));
      const std::vector<double> truth = terms(exact());
      double widest = 0;
      for (std::size_t i = 0; i < truth.size(); ++i) {
        const double ratio = noisy[i] / truth[i];
        EXPECT_LE(std::abs(ratio - 1), e * (1 + 1e-12)) << "seed " << seed << " term " << i;
        widest = std::max(widest, std::abs(ratio - 1));
      }
      EXPECT_GT(widest, e / 2) << "seed " << seed << ": the errors barely move";
    }
  }
}

TEST(PlannerError, TheSameSeedGivesTheSameErrorsAndAnotherSeedOthers) {
  const CostModel a = exact().with_planner_error({0.1, 7});
  EXPECT_EQ(terms(a), terms(exact().with_planner_error({0.1, 7})));
  EXPECT_NE(terms(a), terms(exact().with_planner_error({0.1, 8})));
}

// Systematic over a size range and continuous: a size 0.1 % larger sees nearly the same factor.
TEST(PlannerError, TheErrorDriftsSmoothlyWithTheSize) {
  const CostModel truth = exact();
  const CostModel noisy = exact().with_planner_error({0.1, 3});
  for (double m = 100; m < 1e6; m *= 1.9) {
    const double here = noisy.gemm_time(m, 4096, 4096) / truth.gemm_time(m, 4096, 4096);
    const double next = noisy.gemm_time(m * 1.001, 4096, 4096) / truth.gemm_time(m * 1.001, 4096, 4096);
    EXPECT_NEAR(here, next, 0.1 * 2 * std::log2(1.001) * 1.01) << "m " << m;
  }
}

TEST(PlannerError, CountsAndMemoryAreNotPerturbed) {
  const CostModel truth = exact();
  const CostModel noisy = exact().with_planner_error({0.1, 5});
  EXPECT_EQ(noisy.token_capacity_per_gpu(), truth.token_capacity_per_gpu());
  EXPECT_EQ(noisy.attention_fwd_flops(1e9), truth.attention_fwd_flops(1e9));
  EXPECT_EQ(noisy.kv_bytes(4096), truth.kv_bytes(4096));
}

}  // namespace
}  // namespace zb
