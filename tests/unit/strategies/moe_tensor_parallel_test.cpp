// The MoE layer under tensor parallelism (issue 34, item 2; core/strategies/moe_layer.hpp, docs/MOE.md):
// with ETP = TP the layer is planned on the TP-group grid and expanded with the rest of the plan. Each member
// of a TP group routes its sequence-parallel share of the group's tokens, dispatches the rows of its own
// tokens to the same member of the other TP groups of its expert group, and runs its column and row slices
// of the experts over the rows its whole group received, between an all-gather and a reduce-scatter of
// those rows. Every strategy keeps every promise of a plan and of a Program, under the planner's balanced
// routing and the router's.
#include <gtest/gtest.h>

#include <map>

#include "core/lower/lower.hpp"
#include "core/lower/verify_program.hpp"
#include "core/plan/verify.hpp"
#include "core/strategies/moe_layer.hpp"
#include "core/strategies/strategy.hpp"
#include "core/strategies/tensor_parallel.hpp"
#include "moe_support.hpp"
#include "support.hpp"

namespace zb {
namespace {

Scenario moe_tp_scenario(int nodes, int t, int expert_degree) {
  return test::moe_test_scenario(nodes, t, expert_degree);
}

plan::VerifyOptions verify_options(const CostModel& cost, const Scenario& s) {
  return {.token_capacity = tensor_parallel_token_capacity(cost, s.parallelism.tensor),
          .heads = s.model.heads,
          .capacity_of_tp_width = [&cost](int w) { return tensor_parallel_token_capacity(cost, w); }};
}

std::vector<const plan::Op*> ops_named(const plan::Plan& p, int rank, const std::string& name) {
  std::vector<const plan::Op*> out;
  for (const plan::Op& op : p.ranks[static_cast<std::size_t>(rank)].ops)
    if (op.name == name) out.push_back(&op);
  return out;
}

// Every strategy and option, TP 2 and 4, expert groups inside a node and across two, random batches.
TEST(MoeTensorParallel, EveryStrategyKeepsEveryPromiseUnderBalancedAndRealisedRouting) {
  int with_layer = 0;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    Rng rng(seed, 342);
    const int t = seed % 2 == 0 ? 4 : 2;
    const int grid = 16 / t;
    const int e = seed <= 2 ? grid : grid / 2;
    const Scenario s = moe_tp_scenario(2, t, e);
    const CostModel cost(s);
    const MoeRouter router(s.model.moe, s.model.layers, seed);
    std::vector<std::int64_t> lengths;
    for (int i = 0, n = 2 + static_cast<int>(rng.below(10)); i < n; ++i)
      lengths.push_back(1 + static_cast<std::int64_t>(rng.below(1ULL << 14)));
    for (const SystemSpec& sys : test::registered_variants(grid, {1})) {
      plan::Plan p = make_strategy(sys, s, cost)->make_plan(test::batch_of(lengths));
      const std::string what = "seed " + std::to_string(seed) + " t " + std::to_string(t) + " e " +
                               std::to_string(e) + " " + sys.label;
      if (!p.feasible() || !p.info.contains("moe_layer")) continue;
      ++with_layer;
      for (const int iteration : {-1, 0, 2}) {
        if (iteration >= 0) route_moe_layer(p, cost, realised_routing(p, router, iteration));
        const auto problems = plan::verify(p, verify_options(cost, s));
        ASSERT_TRUE(problems.empty()) << what << " iteration " << iteration << ": " << problems.front();
        const lower::Program program = lower::lower(p, cost, {.backward = true});
        const auto faults = lower::verify(program);
        ASSERT_TRUE(faults.empty()) << what << " iteration " << iteration << ": " << faults.front();
      }
    }
  }
  EXPECT_GT(with_layer, 30);
}

// One ring-CP plan under TP 2 with 4-way expert parallelism over two nodes, routed by the router: the
// members' router rows add up to their group's tokens; a member's dispatch goes to the same member of the
// other groups and carries its own tokens' choices for their experts; the expert GEMMs of both members run
// the rows their group received, and the all-gather before them carries those rows.
TEST(MoeTensorParallel, MembersRouteTheirShareAndRunTheirSliceOfTheGroupsRows) {
  const Scenario s = moe_tp_scenario(2, 2, 4);
  const CostModel cost(s);
  const MoeRouter router(s.model.moe, s.model.layers, 5);
  plan::Plan p = make_strategy(test::system("ring-cp"), s, cost)
                     ->make_plan(test::batch_of({20000, 9000, 4000, 1500, 700, 300, 90}));
  ASSERT_TRUE(p.feasible());
  ASSERT_TRUE(p.info.contains("moe_layer"));
  const MoeRouting routing = realised_routing(p, router, 1);
  route_moe_layer(p, cost, routing);
  const int per_grid_rank = s.model.moe.experts / 4;
  const auto sent = [&](const ExpertLoads& l, int from, int to_grid) {
    std::int64_t n = 0;
    for (int x = to_grid % 4 * per_grid_rank; x < (to_grid % 4 + 1) * per_grid_rank; ++x)
      n += l.routed_of(from, x);
    return n;
  };
  const double row = cost.hidden_bytes(1.0);
  for (int v = 0; v < p.world_size / 2; ++v) {
    const int a = 2 * v, b = 2 * v + 1;  // the group's members (t consecutive GPUs)
    const auto routers_a = ops_named(p, a, "router"), routers_b = ops_named(p, b, "router");
    const auto qkv = ops_named(p, a, "qkv");
    ASSERT_EQ(routers_a.size(), qkv.size());
    for (std::size_t i = 0; i < qkv.size(); ++i) {
      EXPECT_EQ(routers_a[i]->m + routers_b[i]->m, qkv[i]->m) << "group " << v;
      EXPECT_EQ(routers_a[i]->n, s.model.moe.experts);
    }
    for (const int r : {a, b}) {
      const int member = r - 2 * v;
      const auto dispatch = ops_named(p, r, "dispatch");
      const auto up = ops_named(p, r, "expert_up");
      ASSERT_EQ(dispatch.size(), up.size());
      for (std::size_t i = 0; i < dispatch.size(); ++i) {
        const plan::Op& d = *dispatch[i];
        const ExpertLoads& loads = routing.micro_batches[static_cast<std::size_t>(d.micro_batch)];
        ASSERT_EQ(d.collective_ranks.size(), 4U);
        std::int64_t group_rows = 0;
        for (std::size_t j = 0; j < 4; ++j) {
          const int peer = d.collective_ranks[j];
          EXPECT_EQ(peer % 2, member) << "rank " << r << " dispatches to another member index";
          const int peer_grid = peer / 2;
          EXPECT_EQ(peer_grid, v / 4 * 4 + static_cast<int>(j));
          const std::int64_t rows = peer == r ? 0 : sent(loads, r, peer_grid);
          EXPECT_EQ(d.peer_bytes[j], std::llround(row * static_cast<double>(rows))) << "rank " << r;
          // What group v's experts receive: every member's choices from each group of the expert group.
          for (const int m : {0, 1}) group_rows += sent(loads, peer_grid * 2 + m, v);
        }
        EXPECT_EQ(up[i]->m, group_rows) << "rank " << r;
        EXPECT_EQ(up[i]->n, 2 * s.model.moe.expert_ffn_hidden / 2) << "a column slice of the experts";
        const plan::Op& gather =
            p.ranks[static_cast<std::size_t>(r)].ops[static_cast<std::size_t>(up[i]->deps.at(0))];
        EXPECT_EQ(gather.collective, plan::CollectiveKind::all_gather);
        EXPECT_EQ(gather.collective_ranks, (std::vector<int>{a, b}));
        const auto all = static_cast<std::int64_t>(cost.hidden_bytes(static_cast<double>(group_rows)));
        EXPECT_EQ(gather.bytes, all * (member + 1) / 2 - all * member / 2);
      }
    }
  }
  // The routing facts are per TP group: what the group's experts receive.
  EXPECT_GE(p.info["moe_layer"]["rank_load_imbalance"].get<double>(), 1.0);
  EXPECT_LE(p.info["moe_layer"]["rank_load_imbalance"].get<double>(), 4.0);
}

// Every choice is kept (dropless): over a micro-batch, the routed rows the groups' experts run are top_k
// per token of the batch, counted once per group (its members run slices of the same rows).
TEST(MoeTensorParallel, ExpertRowsAddUpToTopKPerTokenOncePerGroup) {
  const Scenario s = moe_tp_scenario(1, 2, 2);
  const CostModel cost(s);
  const MoeRouter router(s.model.moe, s.model.layers, 9);
  plan::Plan p = make_strategy(test::system("zeppelin"), s, cost)
                     ->make_plan(test::batch_of({12000, 5000, 2000, 800, 100, 40, 7}));
  ASSERT_TRUE(p.feasible());
  route_moe_layer(p, cost, realised_routing(p, router, 0));
  std::map<int, std::int64_t> rows, tokens;
  for (int r = 0; r < p.world_size; ++r) {
    for (const plan::Op* op : ops_named(p, r, "router")) tokens[op->micro_batch] += op->m;
    if (r % 2 != 0) continue;  // member 0 of each group
    for (const plan::Op* op : ops_named(p, r, "expert_up")) rows[op->micro_batch] += op->m;
  }
  ASSERT_FALSE(tokens.empty());
  for (const auto& [mb, n] : tokens) EXPECT_EQ(rows[mb], n * s.model.moe.top_k) << "micro-batch " << mb;
}

}  // namespace
}  // namespace zb
