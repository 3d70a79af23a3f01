// How the fixed-degree baselines deal documents to their data-parallel groups (docs/STRATEGIES.md,
// "Dealing"): balanced by default, so no GPU idles while there are documents for it; round-robin only
// when asked for.
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

// Ranks that run at least one attention op.
std::set<int> busy_ranks(const plan::Plan& p) {
  std::set<int> busy;
  for (const auto& r : p.ranks) {
    for (const auto& op : r.ops) {
      if (op.kind == plan::OpKind::attention) busy.insert(r.rank);
    }
  }
  return busy;
}

// The case: 64 documents of 2k tokens on 2 × dgx-h200 (16 GPUs, 16 groups at degree 1).
TEST(BaselineDealing, BalancedLeavesNoGpuIdleWith64ShortDocumentsOn16Gpus) {
  const Scenario s = test::preset_scenario("dgx-h200", 2, "llama-7b");
  const std::vector<std::int64_t> docs(64, 2048);
  for (const nlohmann::json& degree : {nlohmann::json(1), nlohmann::json("auto")}) {
    const plan::Plan p = plan_of(s, test::system("uniform-cp", {{"degree", degree}}), docs);
    ASSERT_TRUE(p.feasible());
    EXPECT_EQ(busy_ranks(p).size(), 16u) << "degree " << degree.dump();
    EXPECT_EQ(p.info.at("dealing"), "balanced");
  }
}

// Round-robin stays available, with its semantics: memory-sized packs, so few packs for many groups.
TEST(BaselineDealing, RoundRobinDealsMemorySizedPacksAndCanLeaveGroupsIdle) {
  const Scenario s = test::preset_scenario("dgx-h200", 2, "llama-7b");
  const plan::Plan p = plan_of(s, test::system("uniform-cp", {{"degree", 1}, {"dealing", "round-robin"}}),
                               std::vector<std::int64_t>(64, 2048));
  ASSERT_TRUE(p.feasible());
  EXPECT_EQ(p.info.at("dealing"), "round-robin");
  EXPECT_EQ(busy_ranks(p).size(), p.info.at("packs").get<std::size_t>());
  EXPECT_LT(busy_ranks(p).size(), 16u);
}

// Property: with at least as many documents as groups, every group (every rank) gets work, for random
// batches, degrees and both fixed-degree baselines.
TEST(BaselineDealing, EveryGroupGetsWorkWhenThereAreEnoughDocuments) {
  const Scenario s = test::preset_scenario("dgx-h200", 2, "llama-7b");
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    Rng rng(seed);
    for (const int degree : {1, 2, 4, 8}) {
      const int groups = 16 / degree;
      std::vector<std::int64_t> docs(static_cast<std::size_t>(groups + static_cast<int>(rng.below(21))));
      for (auto& len : docs) len = 16 + static_cast<std::int64_t>(rng.below(16384 - 16 + 1));
      for (const char* name : {"uniform-cp", "ring-cp"}) {
        const plan::Plan p = plan_of(s, test::system(name, {{"degree", degree}}), docs);
        ASSERT_TRUE(p.feasible()) << name << " seed " << seed;
        EXPECT_EQ(busy_ranks(p).size(), 16u) << name << " degree " << degree << " seed " << seed;
      }
    }
  }
}

// ring-cp's degree is TE's CP size: groups of C consecutive ranks; by default one group of all GPUs.
TEST(BaselineDealing, RingCpDegreeSetsTheCpSize) {
  const Scenario s = test::preset_scenario("dgx-h200", 2, "llama-7b");
  const std::vector<std::int64_t> docs{30000, 20000, 9000, 4000, 1000};
  const plan::Plan all = plan_of(s, test::system("ring-cp"), docs);
  EXPECT_EQ(all.info.at("degree"), 16);
  const plan::Plan eight = plan_of(s, test::system("ring-cp", {{"degree", 8}}), docs);
  EXPECT_EQ(eight.info.at("degree"), 8);
  EXPECT_EQ(eight.info.at("groups"), 2);
  for (const plan::Group& g : eight.groups) {
    ASSERT_EQ(g.ranks.size(), 8u);
    for (std::size_t i = 1; i < g.ranks.size(); ++i) EXPECT_EQ(g.ranks[i], g.ranks[0] + static_cast<int>(i));
  }
}

}  // namespace
}  // namespace zb
