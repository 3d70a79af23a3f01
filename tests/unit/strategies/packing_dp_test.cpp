// packing-dp as a specification (docs/STRATEGIES.md "packing-dp"): no context parallelism, every
// document whole on one GPU, FFD packs of the GPU's capacity M; a document longer than M is an OOM that
// names it; with at least N documents every GPU gets work; the plan is uniform-cp's at degree 1.
#include <gtest/gtest.h>

#include <set>

#include "core/common/rng.hpp"
#include "core/strategies/strategy.hpp"
#include "support.hpp"

namespace zb {
namespace {

plan::Plan plan_of(const Scenario& s, const SystemSpec& sys, std::vector<std::int64_t> lengths) {
  const CostModel cost(s.cluster, s.model);
  return make_strategy(sys, s, cost)->make_plan(test::batch_of(std::move(lengths)));
}

std::int64_t capacity_of(const Scenario& s) {
  return CostModel(s.cluster, s.model).token_capacity_per_gpu();
}

TEST(PackingDp, ADocumentLongerThanOneGpuHoldsIsAnOomNamingItsLengthAndTheCapacity) {
  const Scenario s = test::preset_scenario("dgx-h200", 2, "llama-7b");
  const std::int64_t m = capacity_of(s);
  const plan::Plan p = plan_of(s, test::system("packing-dp"), {1000, m + 1, 2000});
  ASSERT_FALSE(p.feasible());
  ASSERT_EQ(p.oom.size(), 1u);
  EXPECT_EQ(p.oom[0].tokens_needed, m + 1);
  EXPECT_EQ(p.oom[0].token_capacity, m);
  EXPECT_EQ(p.info.at("oversized_document").at("index"), 1);
  EXPECT_EQ(p.info.at("oversized_document").at("length"), m + 1);
  EXPECT_EQ(p.info.at("oversized_document").at("capacity_tokens"), m);
}

// Never split: every group is one GPU running whole documents with no transfers.
TEST(PackingDp, EveryDocumentRunsWholeOnOneGpuWithoutCommunication) {
  const Scenario s = test::preset_scenario("dgx-h200", 2, "llama-7b");
  const std::int64_t m = capacity_of(s);
  const plan::Plan p = plan_of(s, test::system("packing-dp"), {m - 1, m / 2, m / 3, 4096, 17, 1});
  ASSERT_TRUE(p.feasible());
  for (const plan::Group& g : p.groups) {
    EXPECT_EQ(g.ranks.size(), 1u);
    EXPECT_EQ(g.level, plan::Level::local);
    EXPECT_EQ(g.sharding, plan::Sharding::whole);
  }
  for (const auto& r : p.ranks) {
    for (const auto& op : r.ops) EXPECT_TRUE(op.kind != plan::OpKind::send && op.kind != plan::OpKind::recv);
  }
}

TEST(PackingDp, EveryGpuGetsWorkWhenThereAreAtLeastAsManyDocumentsAsGpus) {
  const Scenario s = test::preset_scenario("dgx-h200", 2, "llama-7b");
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    Rng rng(seed, 3);
    std::vector<std::int64_t> docs(16 + rng.below(40));
    for (auto& len : docs) len = 1 + static_cast<std::int64_t>(rng.below(16384));
    const plan::Plan p = plan_of(s, test::system("packing-dp"), docs);
    ASSERT_TRUE(p.feasible()) << "seed " << seed;
    std::set<int> busy;
    for (const plan::Group& g : p.groups) busy.insert(g.ranks[0]);
    EXPECT_EQ(busy.size(), 16u) << "seed " << seed;
  }
}

// A GPU's documents beyond its memory run as further packs (micro-batches), each within M.
TEST(PackingDp, DocumentsBeyondOneGpusMemoryRunAsMorePacks) {
  const Scenario s = test::preset_scenario("dgx-h200", 1, "llama-7b");
  const std::int64_t m = capacity_of(s);
  const plan::Plan p = plan_of(s, test::system("packing-dp"), std::vector<std::int64_t>(24, m * 2 / 3));
  ASSERT_TRUE(p.feasible());
  EXPECT_EQ(p.micro_batches, 3);  // 24 documents, 8 GPUs, one document per pack
  EXPECT_EQ(p.info.at("packs"), 24);
}

TEST(PackingDp, PlansWhatUniformCpPlansAtDegreeOne) {
  const Scenario s = test::preset_scenario("dgx-h200", 2, "llama-7b");
  const std::int64_t m = capacity_of(s);
  const std::vector<std::int64_t> docs{m - 1, m / 2, m / 3, 4000, 4000, 1000, 700, 64, 3};
  for (const char* dealing : {"balanced", "round-robin"}) {
    const plan::Plan dp = plan_of(s, test::system("packing-dp", {{"dealing", dealing}}), docs);
    const plan::Plan cp = plan_of(s, test::system("uniform-cp", {{"degree", 1}, {"dealing", dealing}}), docs);
    ASSERT_TRUE(dp.feasible());
    EXPECT_EQ(dp.info.at("dealing"), dealing);
    EXPECT_EQ(dp.predicted.iteration_seconds, cp.predicted.iteration_seconds) << dealing;
    EXPECT_EQ(dp.groups.size(), cp.groups.size()) << dealing;
  }
}

}  // namespace
}  // namespace zb
