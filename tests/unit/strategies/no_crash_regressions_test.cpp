// What the no-crash property test (no_crash_test.cpp) found, each kept as the smallest case that showed it.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/lower/lower.hpp"
#include "core/lower/verify_program.hpp"
#include "core/plan/verify.hpp"
#include "core/strategies/strategy.hpp"
#include "core/strategies/tensor_parallel.hpp"
#include "support.hpp"

namespace zb {
namespace {

plan::Plan plan_of(const SystemSpec& sys, const Scenario& s, const std::vector<std::int64_t>& lengths) {
  const CostModel cost(s.cluster, s.model);
  return make_strategy(sys, s, cost)->make_plan(test::batch_of(lengths));
}

// What the run checks of a plan (run_scenario.cpp): plan::verify (a GPU of a TP group by its group's
// capacity), then the lowered Program's verify,
// forward and backward.
std::vector<std::string> problems_of(const plan::Plan& p, const Scenario& s) {
  const CostModel cost(s.cluster, s.model);
  const auto capacity = [&](int w) { return tensor_parallel_token_capacity(cost, w); };
  std::vector<std::string> problems = plan::verify(
      p, {.token_capacity = capacity(1), .heads = s.model.heads, .capacity_of_tp_width = capacity});
  if (problems.empty()) problems = lower::verify(lower::lower(p, cost, {.backward = true}));
  return problems;
}

// USP (ulysses with u > 1 and r > 1) over a pack whose documents are shorter than the ring has chunks: a
// u-group whose zigzag chunks are all empty holds no rows and computes no attention, so its all-to-alls
// have no heads to trade. The lowering refused the plan ("0 different head ranges"), an exception out of
// make_plan (found on 64 DGX-H200 nodes with 64 tokens per GPU; one node and a 1-token document show it).
TEST(NoCrashRegression, UspOverDocumentsShorterThanTheRingPlans) {
  const Scenario s = test::preset_scenario("dgx-h200", 1, "llama-7b");
  for (const std::vector<std::int64_t>& lengths :
       {std::vector<std::int64_t>{1}, {2, 1}, {3, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1, 1}}) {
    const plan::Plan p = plan_of(test::system("ulysses", {{"degree", 2}, {"ring", 2}}), s, lengths);
    ASSERT_TRUE(p.feasible());
    const auto problems = problems_of(p, s);
    EXPECT_TRUE(problems.empty()) << problems.front();
  }
}

// A routed ring hop of gigabytes (two DGX-H100 nodes with a hundred times their memory, 1.7M tokens per
// GPU, and a document of nine GPUs' worth: 4 GB of K/V per hop) had its backward dK/dV return split over the
// rails as part * bytes / total in int64, which overflowed into a negative part, and the lowering refused
// the plan out of make_plan (found on 64 DGX-H100 nodes with ten thousand times their memory).
TEST(NoCrashRegression, ARoutedHopOfGigabytesSplitsItsBackwardReturnExactly) {
  Scenario s = test::preset_scenario("dgx-h100", 2, "llama3-8b");
  s.cluster.gpu.memory_bytes *= 100;
  const CostModel cost(s.cluster, s.model);
  const plan::Plan p =
      plan_of(test::system("zeppelin", {{"remap", false}}), s, {cost.token_capacity_per_gpu() * 9});
  ASSERT_TRUE(p.feasible()) << p.oom.front().str();
  std::int64_t routed_bytes = 0;
  for (const plan::RankOps& r : p.ranks) {
    for (const plan::Op& op : r.ops) {
      if (op.kind == plan::OpKind::send && op.route.kind == plan::RouteKind::routed)
        routed_bytes = std::max(routed_bytes, op.bytes);
    }
  }
  EXPECT_GT(routed_bytes, 3'000'000'000) << "the case no longer has a routed hop of gigabytes";
  const auto problems = problems_of(p, s);
  EXPECT_TRUE(problems.empty()) << problems.front();
}

// Hydraulis's replicas of different TP widths: llama-30b leaves a single H200 no room for a token, a
// TP-2 or TP-4 replica room for thousands. A document too few for the pool leaves replicas idle, and
// stage 2 packed an idle one-GPU replica's documents by ceil(tokens / capacity) with a capacity of 0:
// SIGFPE (found on 7 DGX-H200 nodes under TP 4 with memory just above the model states).
TEST(NoCrashRegression, HydraulisWithAnIdleReplicaThatHoldsNoTokenPlans) {
  const Scenario s = test::preset_scenario("dgx-h200", 1, "llama-30b");
  ASSERT_EQ(CostModel(s.cluster, s.model).token_capacity_per_gpu(), 0) << "a single GPU now holds a token";
  for (const char* stage2 : {"lpt", "milp"}) {
    const plan::Plan p = plan_of(test::system("hydraulis", {{"stage2", stage2}}), s, {100});
    ASSERT_TRUE(p.feasible()) << p.oom.front().str();
    const auto problems = problems_of(p, s);
    EXPECT_TRUE(problems.empty()) << problems.front();
  }
}

}  // namespace
}  // namespace zb
