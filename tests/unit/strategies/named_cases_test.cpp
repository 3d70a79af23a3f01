// Named cases from the Plan issue: what Zeppelin must do on well-understood batches.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/plan/verify.hpp"
#include "core/strategies/strategy.hpp"
#include "support.hpp"

namespace zb {
namespace {

using plan::OpKind;

struct Planned {
  Scenario scenario;
  CostModel cost;
  plan::Plan plan;
};

Planned plan_with(const std::string& cluster, int nodes, const SystemSpec& sys,
                  std::vector<std::int64_t> lengths) {
  Scenario s = test::preset_scenario(cluster, nodes, "llama-7b");
  CostModel cost(s.cluster, s.model);
  auto strategy = make_strategy(sys, s, cost);
  plan::Plan p = strategy->make_plan(test::batch_of(std::move(lengths)));
  return {s, cost, std::move(p)};
}

// NICs (global ids) that carry an inter-node leg of some send.
std::set<int> nics_used(const Planned& pl) {
  std::set<int> nics;
  const auto& c = pl.scenario.cluster;
  for (const auto& r : pl.plan.ranks) {
    for (const auto& op : r.ops) {
      if (op.kind != OpKind::send || c.node_of(r.rank) == c.node_of(op.peer)) continue;
      if (op.route.kind == plan::RouteKind::routed) {
        for (std::size_t i = 0; i < op.route.proxies.size(); ++i) {
          nics.insert(c.global_nic_of(op.route.proxies[i]));
          nics.insert(c.global_nic_of(op.route.peer_proxies[i]));
        }
      } else {
        nics.insert(c.global_nic_of(r.rank));
        nics.insert(c.global_nic_of(op.peer));
      }
    }
  }
  return nics;
}

TEST(ZeppelinNamedCases, OneLongSequenceGoesInterNodeAndUsesEveryNic) {
  const auto pl = plan_with("dgx-h200", 2, test::system("zeppelin"), {65536});
  ASSERT_TRUE(pl.plan.feasible());
  EXPECT_TRUE(plan::verify(pl.plan, {pl.cost.token_capacity_per_gpu()}).empty());
  ASSERT_EQ(pl.plan.groups.size(), 1u);
  EXPECT_EQ(pl.plan.groups[0].level, plan::Level::inter_node);
  EXPECT_EQ(pl.plan.groups[0].ranks.size(), 16u);
  EXPECT_EQ(nics_used(pl).size(), 16u) << "all 8 NICs of both nodes carry inter-node traffic";
}

TEST(ZeppelinNamedCases, WithoutRoutingOnlyBoundaryNicsCarryTraffic) {
  const auto pl = plan_with("dgx-h200", 2, test::system("zeppelin", {{"routing", false}}), {65536});
  ASSERT_TRUE(pl.plan.feasible());
  const auto nics = nics_used(pl);
  // Ring 0..15: the hops 7 → 8 and 15 → 0 cross nodes; they use GPU 7's and GPU 15's NICs (rail 7) to
  // send and GPU 8's and GPU 0's (rail 0) to receive.
  EXPECT_EQ(nics, (std::set<int>{0, 7, 8, 15}));
}

TEST(ZeppelinNamedCases, OnA800EveryOneOfTheFourNicsIsUsed) {
  const auto pl = plan_with("a800-4nic", 2, test::system("zeppelin"), {65536});
  ASSERT_TRUE(pl.plan.feasible());
  EXPECT_TRUE(plan::verify(pl.plan, {pl.cost.token_capacity_per_gpu()}).empty());
  EXPECT_EQ(nics_used(pl).size(), 8u) << "4 NICs on each of the two nodes";
}

TEST(ZeppelinNamedCases, ShortSequencesStayLocalWithNoAttentionTraffic) {
  const auto pl = plan_with("dgx-h200", 2, test::system("zeppelin"), std::vector<std::int64_t>(1000, 512));
  ASSERT_TRUE(pl.plan.feasible());
  EXPECT_TRUE(plan::verify(pl.plan, {pl.cost.token_capacity_per_gpu()}).empty());
  for (const auto& g : pl.plan.groups) EXPECT_EQ(g.level, plan::Level::local);
  for (const auto& r : pl.plan.ranks) {
    for (const auto& op : r.ops) EXPECT_NE(op.kind, OpKind::send) << "rank " << r.rank << " op " << op.id;
  }
}

TEST(ZeppelinNamedCases, LinearLayoutIsTokenBalanced) {
  // One node: a 30k sequence's ring plus 100 short ones of 500 tokens leaves the attention layout uneven
  // in tokens; the lowered plans' estimates pick the remapped layout, which evens it out.
  std::vector<std::int64_t> lengths{30000};
  lengths.insert(lengths.end(), 100, 500);
  const auto pl = plan_with("dgx-h200", 1, test::system("zeppelin"), lengths);
  ASSERT_TRUE(pl.plan.feasible());
  EXPECT_TRUE(plan::verify(pl.plan, {pl.cost.token_capacity_per_gpu()}).empty());
  ASSERT_FALSE(pl.plan.remap.empty()) << "the remap is chosen";
  std::int64_t max_tokens = 0;
  for (const auto& l : pl.plan.linear_layout) max_tokens = std::max(max_tokens, l.tokens());
  EXPECT_LE(static_cast<double>(max_tokens) / (80000.0 / 8) - 1.0, 0.01);
}

TEST(RingCpNamedCases, RingSpansAllGpusWithDirectRoutes) {
  const auto pl = plan_with("dgx-h200", 2, test::system("ring-cp"), {65536});
  ASSERT_TRUE(pl.plan.feasible());
  EXPECT_TRUE(plan::verify(pl.plan, {pl.cost.token_capacity_per_gpu()}).empty());
  ASSERT_EQ(pl.plan.groups.size(), 1u);
  EXPECT_EQ(pl.plan.groups[0].ranks.size(), 16u);
  EXPECT_EQ(nics_used(pl), (std::set<int>{0, 7, 8, 15}));
}

TEST(StrategiesNamedCases, SequenceLargerThanTheClusterIsReportedAsOom) {
  for (const std::string& name : strategy_names()) {
    const auto pl = plan_with("dgx-h200", 1, test::system(name), {4'000'000});
    EXPECT_FALSE(pl.plan.feasible()) << name;
    ASSERT_FALSE(pl.plan.oom.empty()) << name;
    EXPECT_GT(pl.plan.oom[0].tokens_needed, pl.plan.oom[0].token_capacity) << name;
  }
}

}  // namespace
}  // namespace zb
