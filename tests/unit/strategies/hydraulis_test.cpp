// hydraulis as a specification (docs/STRATEGIES.md "hydraulis"). By default its groups are model replicas
// of different tensor-parallel widths (the published design); the first tests below pin the ring-CP
// variant ("groups": "context"), the last ones the replicas. A pool of power-of-two group-size
// multisets summing to N that always holds the homogeneous ones; stage 1 sends a document only the
// widest groups hold to them and spreads the rest by min-max group time; stage 2 packs each group into
// the fewest micro-batches its objective prefers, never above a GPU's capacity; the groups are fixed for
// the iteration on consecutive GPUs; a document longer than the widest group holds is an OOM naming it.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "core/common/rng.hpp"
#include "core/plan/verify.hpp"
#include "core/strategies/dynamic_cp_ring.hpp"
#include "core/strategies/hydraulis_dispatch.hpp"
#include "core/strategies/strategy.hpp"
#include "core/strategies/tensor_parallel.hpp"
#include "support.hpp"

namespace zb {
namespace {

plan::Plan plan_of(const Scenario& s, std::vector<std::int64_t> lengths,
                   const std::string& groups = "context") {
  const CostModel cost(s.cluster, s.model);
  return make_strategy(test::system("hydraulis", {{"groups", groups}}), s, cost)
      ->make_plan(test::batch_of(std::move(lengths)));
}

std::int64_t capacity_of(const Scenario& s) {
  return CostModel(s.cluster, s.model).token_capacity_per_gpu();
}

TEST(Hydraulis, ThePoolHoldsTheHomogeneousSetsAndTheTwoSizeMixes) {
  using Sizes = std::vector<int>;
  const std::vector<Sizes> expected = {
      {1, 1, 1, 1, 1, 1, 1, 1}, {2, 2, 2, 2},       {4, 4}, {8},  // homogeneous
      {2, 1, 1, 1, 1, 1, 1},    {2, 2, 1, 1, 1, 1},               // B = 2
      {4, 1, 1, 1, 1},          {4, 2, 2},                        // B = 4
  };
  EXPECT_EQ(hydraulis_pool(8), expected);
  // A world that is no power of two: every multiset still sums to it, in powers of two, descending.
  for (const Sizes& sizes : hydraulis_pool(24)) {
    int sum = 0;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      sum += sizes[i];
      EXPECT_EQ(sizes[i] & (sizes[i] - 1), 0);
      if (i > 0) {
        EXPECT_LE(sizes[i], sizes[i - 1]);
      }
    }
    EXPECT_EQ(sum, 24);
  }
}

// A document only a 4-GPU group holds goes to the candidate's 4-GPU group; the short ones spread over
// the narrow groups so the largest group time is as small as the dispatch can make it.
TEST(Hydraulis, StageOneSendsADocumentOnlyTheWidestGroupHoldsThere) {
  const Scenario s = test::preset_scenario("dgx-h200", 1, "llama-7b");
  const CostModel cost(s.cluster, s.model);
  const std::int64_t m = cost.token_capacity_per_gpu();
  const std::vector<std::int64_t> lengths = {1000, 3 * m, 2000, 1500, 800};
  const HydraulisCosts costs(cost, lengths, Passes::fwd_bwd);
  const auto d = dispatch_documents(costs, {4, 1, 1, 1, 1}, {0, 1, 2, 3, 4}, false);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->group_docs[0], std::vector<int>{1});
  for (std::size_t g = 1; g < 5; ++g) EXPECT_EQ(d->group_docs[g].size(), 1u);  // one short document each
  // Without a group that holds it, the candidate is rejected.
  EXPECT_FALSE(dispatch_documents(costs, {2, 2, 2, 2}, {0, 1, 2, 3, 4}, false).has_value());
  // Two groups for one document: one would idle, which Hetu rejects unless allowed.
  EXPECT_FALSE(dispatch_documents(costs, {4, 4}, {1}, false).has_value());
  EXPECT_TRUE(dispatch_documents(costs, {4, 4}, {1}, true).has_value());
}

TEST(Hydraulis, StageTwoPacksWithinCapacityInTheFewestMicroBatchesThatPay) {
  const Scenario s = test::preset_scenario("dgx-h200", 1, "llama-7b");
  const CostModel cost(s.cluster, s.model);
  const std::int64_t m = cost.token_capacity_per_gpu();
  const std::vector<std::int64_t> lengths = {m / 4, m / 4, m / 8, 3 * m / 2, 3 * m / 2, m};
  const HydraulisCosts costs(cost, lengths, Passes::fwd_bwd);
  EXPECT_EQ(pack_group(costs, 1, {0, 1, 2}).packs.size(), 1u);  // fits once: splitting only adds c
  const Packing two = pack_group(costs, 2, {3, 4, 5});
  ASSERT_GE(two.packs.size(), 2u);
  std::set<int> seen;
  for (const auto& pack : two.packs) {
    std::int64_t share = 0;
    for (const int d : pack)
      share += ring_share_tokens(lengths[static_cast<std::size_t>(d)], 2), seen.insert(d);
    EXPECT_LE(share, m);
  }
  EXPECT_EQ(seen, (std::set<int>{3, 4, 5}));
}

TEST(Hydraulis, ADocumentLongerThanTheWidestGroupHoldsIsAnOomNamingIt) {
  const Scenario s = test::preset_scenario("dgx-h200", 1, "llama-7b");
  const std::int64_t m = capacity_of(s);
  const plan::Plan p = plan_of(s, {100, 8 * m + 1});
  ASSERT_FALSE(p.feasible());
  EXPECT_EQ(p.info.at("oversized_document").at("index"), 1);
  EXPECT_EQ(p.info.at("oversized_document").at("length"), 8 * m + 1);
  EXPECT_EQ(p.info.at("oversized_document").at("capacity_tokens"), 8 * m);
  ASSERT_EQ(p.oom.size(), 1u);
  EXPECT_GT(p.oom[0].tokens_needed, p.oom[0].token_capacity);
}

// On random mixed batches: the plan verifies; its groups are fixed for the iteration (each GPU in one
// group of one size), power-of-two sizes on consecutive GPUs at multiples of their size; no group idles
// when there are at least as many documents as GPUs.
TEST(Hydraulis, RandomBatchesGiveFixedHeterogeneousGroupsThatAllWork) {
  const Scenario s = test::preset_scenario("dgx-h200", 2, "llama-7b");
  const std::int64_t m = capacity_of(s);
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    Rng rng(seed, 21);
    std::vector<std::int64_t> docs(16 + rng.below(60));
    for (auto& len : docs)
      len = 1 + static_cast<std::int64_t>(
                    rng.below(rng.below(4) == 0 ? static_cast<std::uint64_t>(5 * m) : 16384));
    const plan::Plan p = plan_of(s, docs);
    ASSERT_TRUE(p.feasible()) << "seed " << seed;
    EXPECT_EQ(plan::verify(p, {m}), std::vector<std::string>{}) << "seed " << seed;
    std::map<int, std::vector<int>> group_of_rank;  // rank → its group's ranks
    for (const plan::Group& g : p.groups) {
      const auto size = static_cast<int>(g.ranks.size());
      EXPECT_EQ(size & (size - 1), 0);
      EXPECT_EQ(g.ranks[0] % size, 0) << "seed " << seed;
      for (int i = 0; i < size; ++i) EXPECT_EQ(g.ranks[static_cast<std::size_t>(i)], g.ranks[0] + i);
      for (const int r : g.ranks) {
        auto [it, fresh] = group_of_rank.try_emplace(r, g.ranks);
        EXPECT_EQ(it->second, g.ranks) << "seed " << seed << " rank " << r << " changes group";
      }
    }
    EXPECT_EQ(group_of_rank.size(), 16u) << "seed " << seed;
  }
}

// The published form: every group is a model replica, a TP group of its width inside one node. On random
// batches with a long tail the replicas tile the GPUs in descending width, every document runs whole on
// one replica whose members each compute its attention for their slice of the heads, and the plan
// verifies with each GPU's capacity taken at its replica's width.
TEST(Hydraulis, TheDefaultRunsModelReplicasOfTensorParallelWidthsSideBySide) {
  const Scenario s = test::preset_scenario("dgx-h200", 2, "llama-7b");
  const CostModel cost(s.cluster, s.model);
  const std::int64_t m = capacity_of(s);
  int mixed = 0;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    Rng rng(seed, 21);
    std::vector<std::int64_t> docs(40 + rng.below(80));
    for (auto& len : docs)
      len = 64 + static_cast<std::int64_t>(
                     rng.below(rng.below(10) == 0 ? static_cast<std::uint64_t>(3 * m) : 8192));
    const plan::Plan p = plan_of(s, docs, "tensor");
    ASSERT_TRUE(p.feasible()) << "seed " << seed;
    EXPECT_EQ(p.info.at("group_parallelism"), "tensor");
    const auto problems =
        plan::verify(p, {.token_capacity = -1, .heads = s.model.heads, .capacity_of_tp_width = [&](int w) {
                           return tensor_parallel_token_capacity(cost, w);
                         }});
    EXPECT_EQ(problems, std::vector<std::string>{}) << "seed " << seed;
    // Replicas tile the GPUs in order, descending width, each inside a node.
    int next = 0, previous = 1 << 20;
    std::set<std::size_t> widths;
    for (const std::vector<int>& group : p.tensor_parallel_groups) {
      ASSERT_FALSE(group.empty());
      EXPECT_EQ(group.front(), next) << "seed " << seed;
      EXPECT_LE(static_cast<int>(group.size()), previous) << "seed " << seed;
      EXPECT_EQ(group.front() / 8, group.back() / 8) << "seed " << seed << ": a replica spans nodes";
      previous = static_cast<int>(group.size());
      next = group.back() + 1;
      widths.insert(group.size());
    }
    EXPECT_EQ(next, 16) << "seed " << seed;
    if (widths.size() > 1) ++mixed;
    // A document longer than one GPU holds runs on a replica wide enough for it.
    const std::vector<int> width = p.tensor_parallel_width_per_rank();
    for (const plan::Sequence& q : p.sequences) {
      const plan::Group& g = p.group_of_sequence(q.id);
      EXPECT_LE(q.length,
                tensor_parallel_token_capacity(cost, width[static_cast<std::size_t>(g.ranks.at(0))]))
          << "seed " << seed;
    }
  }
  EXPECT_GE(mixed, 1) << "no batch gave replicas of different widths";
}

// The replicas' TP widths divide the heads and stay inside a node: a model whose K/V heads are 8 (GQA)
// on 8-GPU nodes allows up to 8; the widest replica's capacity bounds the longest document (else an OOM
// naming it, with that width).
TEST(Hydraulis, ADocumentLongerThanTheWidestReplicaHoldsIsAnOomNamingTheWidth) {
  const Scenario s = test::preset_scenario("dgx-h200", 1, "llama-7b");
  const CostModel cost(s.cluster, s.model);
  const std::int64_t widest = tensor_parallel_token_capacity(cost, 8);
  const plan::Plan p = plan_of(s, {100, widest + 1}, "tensor");
  ASSERT_FALSE(p.feasible());
  EXPECT_EQ(p.info.at("oversized_document").at("index"), 1);
  EXPECT_EQ(p.info.at("oversized_document").at("capacity_tokens"), widest);
  EXPECT_EQ(p.info.at("oversized_document").at("widest_tensor_parallel"), 8);
  EXPECT_TRUE(plan_of(s, {100, widest}, "tensor").feasible());
}

// Contradictory options are refused (exit 2 at load, naming the option): a node budget with no MILP.
TEST(Hydraulis, AMilpNodeBudgetWithoutTheMilpIsRefused) {
  const SystemInfo& info = *find_system("hydraulis");
  const auto problems = info.check(info.with_defaults({{"stage2", "lpt"}, {"milp_nodes", 50}}), {});
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].option, "milp_nodes");
  EXPECT_TRUE(info.check(info.with_defaults({{"stage2", "milp"}, {"milp_nodes", 50}}), {}).empty());
  EXPECT_TRUE(info.check(info.with_defaults({{"stage2", "lpt"}}), {}).empty());
}

}  // namespace
}  // namespace zb
