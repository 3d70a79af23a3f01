// A run sizes an MoE plan's Program again with the router's choices instead of lowering the plan a second
// time (core/lower/resize.hpp, called by route_moe_layer): the resized Program must be the Program a fresh
// lowering of the routed plan gives, in every size an executor reads (GEMM shapes, times and FLOPs, the
// exchanges' messages, the collectives' bytes), and time the same under the estimate; where the routing
// changes the Program's shape, the plan keeps no Program and the run lowers it.
#include <gtest/gtest.h>

#include "core/lower/estimate.hpp"
#include "core/lower/lower.hpp"
#include "core/lower/resize.hpp"
#include "core/lower/verify_program.hpp"
#include "core/strategies/moe_layer.hpp"
#include "core/strategies/strategy.hpp"
#include "moe_support.hpp"
#include "support.hpp"

namespace zb {
namespace {

Scenario moe_scenario(int nodes, int t, int expert_degree) {
  return test::moe_test_scenario(nodes, t, expert_degree, 0.6, 0.4);
}

// Every size lowering gives a Program from its plan, compared field by field.
void expect_same_sizes(const lower::Program& a, const lower::Program& b, const std::string& what) {
  ASSERT_EQ(a.ranks.size(), b.ranks.size()) << what;
  ASSERT_EQ(a.messages.size(), b.messages.size()) << what;
  ASSERT_EQ(a.collectives.size(), b.collectives.size()) << what;
  for (std::size_t r = 0; r < a.ranks.size(); ++r) {
    ASSERT_EQ(a.ranks[r].instrs.size(), b.ranks[r].instrs.size()) << what << " rank " << r;
    for (std::size_t i = 0; i < a.ranks[r].instrs.size(); ++i) {
      const lower::Instr& x = a.ranks[r].instrs[i];
      const lower::Instr& y = b.ranks[r].instrs[i];
      const std::string at = what + " " + lower::describe(b, static_cast<int>(r), static_cast<int>(i));
      EXPECT_EQ(x.kind, y.kind) << at;
      EXPECT_EQ(x.m, y.m) << at;
      EXPECT_EQ(x.n, y.n) << at;
      EXPECT_EQ(x.k, y.k) << at;
      EXPECT_EQ(x.seconds, y.seconds) << at;
      EXPECT_EQ(x.flops, y.flops) << at;
      EXPECT_EQ(x.bytes, y.bytes) << at;
      EXPECT_EQ(x.deps.size(), y.deps.size()) << at;
    }
  }
  for (std::size_t m = 0; m < a.messages.size(); ++m) {
    EXPECT_EQ(a.messages[m].bytes, b.messages[m].bytes) << what << " message " << m;
    EXPECT_EQ(a.messages[m].rows, b.messages[m].rows) << what << " message " << m;
  }
  for (std::size_t c = 0; c < a.collectives.size(); ++c)
    EXPECT_EQ(a.collectives[c].bytes, b.collectives[c].bytes) << what << " collective " << c;
}

// Every strategy, with and without TP, expert groups inside a node and across two, random batches and
// iterations: the resized Program is the relowered one, or the plan has none.
TEST(MoeProgramResize, TheResizedProgramIsTheOneAFreshLoweringGives) {
  int resized = 0, relowered = 0;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    Rng rng(seed, 3427);
    const int t = seed % 3 == 0 ? 2 : 1;
    const int grid = 16 / t;
    const Scenario s = moe_scenario(2, t, seed % 2 == 0 ? grid : grid / 2);
    const CostModel cost(s);
    const MoeRouter router(s.model.moe, s.model.layers, seed);
    std::vector<std::int64_t> lengths;
    for (int i = 0, n = 3 + static_cast<int>(rng.below(12)); i < n; ++i)
      lengths.push_back(1 + static_cast<std::int64_t>(rng.below(1ULL << 15)));
    for (const SystemSpec& sys : test::registered_variants(grid, {1})) {
      plan::Plan p = make_strategy(sys, s, cost)->make_plan(test::batch_of(lengths));
      if (!p.feasible() || !p.info.contains("moe_layer") || p.lowered == nullptr) continue;
      const std::string what = "seed " + std::to_string(seed) + " " + sys.label;
      route_moe_layer(p, cost, realised_routing(p, router, static_cast<int>(seed)));
      if (p.lowered == nullptr) {
        ++relowered;
        continue;
      }
      ++resized;
      const lower::Program fresh = lower::lower(p, cost, {.backward = true});
      expect_same_sizes(*p.lowered, fresh, what);
      EXPECT_TRUE(lower::verify(*p.lowered).empty()) << what;
      const auto a = lower::estimate(*p.lowered, lower::nominal_transfers(*p.lowered, cost));
      const auto b = lower::estimate(fresh, lower::nominal_transfers(fresh, cost));
      EXPECT_EQ(a.forward, b.forward) << what;
      EXPECT_EQ(a.backward, b.backward) << what;
    }
  }
  EXPECT_GT(resized, 40) << "relowered " << relowered;
}

// A part that was empty when the prediction lowered the plan and has rows now has no message to carry
// them: the Program cannot be resized, and the plan keeps none.
TEST(MoeProgramResize, APartTheProgramHasNoMessageForMeansLoweringAgain) {
  const Scenario s = moe_scenario(1, 1, 8);
  const CostModel cost(s);
  plan::Plan p =
      make_strategy(test::system("ring-cp"), s, cost)->make_plan(test::batch_of({9000, 3000, 500}));
  ASSERT_TRUE(p.feasible());
  ASSERT_NE(p.lowered, nullptr);
  lower::Program program = *p.lowered;
  EXPECT_TRUE(lower::resize(program, p, cost)) << "the plan it was lowered from";
  for (plan::Op& op : p.ranks[0].ops) {
    if (op.name != "dispatch") continue;
    op.bytes -= op.peer_bytes[1];
    op.peer_bytes[1] = 0;  // a part with a message is now empty
    break;
  }
  EXPECT_FALSE(lower::resize(program, p, cost));
}

}  // namespace
}  // namespace zb
