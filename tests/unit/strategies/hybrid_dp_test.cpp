// hybrid-dp as a specification (docs/STRATEGIES.md "hybrid-dp"): a document that fits one GPU runs there
// whole; a longer one gets the smallest ring that holds it (a power of two of consecutive GPUs, aligned;
// the oracle form takes whole nodes beyond a node); documents go to the least-loaded GPUs by their FLOPs
// (the oracle form: by the cost model's seconds), so loads are balanced; a document longer than the
// widest group holds is an OOM that names it.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/common/rng.hpp"
#include "core/plan/verify.hpp"
#include "core/strategies/strategy.hpp"
#include "support.hpp"

namespace zb {
namespace {

plan::Plan plan_of(const Scenario& s, std::vector<std::int64_t> lengths,
                   const std::string& form = "published") {
  const CostModel cost(s.cluster, s.model);
  return make_strategy(test::system("hybrid-dp", {{"form", form}}), s, cost)
      ->make_plan(test::batch_of(std::move(lengths)));
}

std::int64_t capacity_of(const Scenario& s) {
  return CostModel(s.cluster, s.model).token_capacity_per_gpu();
}

// The group holding sequence `seq`.
const plan::Group& group_of(const plan::Plan& p, int seq) {
  return p.group_of_sequence(seq);
}

TEST(HybridDp, ADocumentThatFitsOneGpuRunsThereWithoutCommunication) {
  const Scenario s = test::preset_scenario("dgx-h200", 2, "llama-7b");
  const plan::Plan p = plan_of(s, {capacity_of(s), 5000, 1});
  ASSERT_TRUE(p.feasible());
  for (int seq = 0; seq < 3; ++seq) {
    EXPECT_EQ(group_of(p, seq).ranks.size(), 1u);
    EXPECT_EQ(group_of(p, seq).level, plan::Level::local);
  }
  EXPECT_EQ(p.info.at("local_documents"), 3);
  EXPECT_EQ(p.info.at("cp_documents"), 0);
}

// ⌈s/M⌉ = 3 → the next power of two: four consecutive GPUs of one node, at an aligned position.
TEST(HybridDp, ADocumentNeedingThreeGpusGetsAFourGpuRingInsideANode) {
  const Scenario s = test::preset_scenario("dgx-h200", 2, "llama-7b");
  const std::int64_t m = capacity_of(s);
  const plan::Plan p = plan_of(s, {5 * m / 2, 1000});
  ASSERT_TRUE(p.feasible());
  const plan::Group& ring = group_of(p, 0);
  ASSERT_EQ(ring.ranks.size(), 4u);
  EXPECT_EQ(ring.level, plan::Level::intra_node);
  EXPECT_EQ(ring.sharding, plan::Sharding::zigzag);
  EXPECT_EQ(ring.ranks[0] % 4, 0);
  for (std::size_t i = 1; i < 4; ++i) EXPECT_EQ(ring.ranks[i], ring.ranks[0] + static_cast<int>(i));
  EXPECT_EQ(group_of(p, 1).ranks.size(), 1u);  // the short one stays local
  // It goes to a GPU the ring does not load.
  EXPECT_TRUE(std::find(ring.ranks.begin(), ring.ranks.end(), group_of(p, 1).ranks[0]) == ring.ranks.end());
}

// More than a node holds → the next power of two of GPUs, aligned at a multiple of its size (ByteScale's
// ⌈s/C⌉ ranks, rounded as Megatron's gpus_needed): ⌈20·M/M⌉ = 20 → all 32 GPUs of 4 nodes.
TEST(HybridDp, ADocumentLongerThanANodeGetsAPowerOfTwoOfGpus) {
  const Scenario s = test::preset_scenario("dgx-h200", 4, "llama-7b");
  const std::int64_t m = capacity_of(s);
  const plan::Plan twelve = plan_of(s, {12 * m});
  ASSERT_TRUE(twelve.feasible());
  ASSERT_EQ(group_of(twelve, 0).ranks.size(), 16u);
  EXPECT_EQ(group_of(twelve, 0).ranks[0] % 16, 0);
  EXPECT_EQ(group_of(twelve, 0).level, plan::Level::inter_node);
  const plan::Plan twenty = plan_of(s, {20 * m});
  ASSERT_TRUE(twenty.feasible());
  EXPECT_EQ(group_of(twenty, 0).ranks.size(), 32u);
  EXPECT_EQ(twenty.info.at("largest_group"), 32);
}

// The oracle form takes the fewest whole consecutive nodes instead: 20·M on 4 nodes → 3 nodes, 24 GPUs.
TEST(HybridDp, TheOracleFormGivesALongDocumentWholeNodes) {
  const Scenario s = test::preset_scenario("dgx-h200", 4, "llama-7b");
  const std::int64_t m = capacity_of(s);
  const plan::Plan p = plan_of(s, {20 * m}, "oracle");
  ASSERT_TRUE(p.feasible());
  const auto& ring = group_of(p, 0);
  ASSERT_EQ(ring.ranks.size(), 24u);
  EXPECT_EQ(ring.ranks[0] % 8, 0);
  EXPECT_EQ(p.info.at("largest_group"), 24);
}

// On 3 nodes (24 GPUs) the widest power-of-two group is 16: a document that needs more is an OOM there,
// where the oracle form runs it on all three nodes.
TEST(HybridDp, ADocumentLongerThanTheWidestPowerOfTwoGroupHoldsIsAnOom) {
  const Scenario s = test::preset_scenario("dgx-h200", 3, "llama-7b");
  const std::int64_t m = capacity_of(s);
  const plan::Plan p = plan_of(s, {100, 20 * m});
  ASSERT_FALSE(p.feasible());
  EXPECT_EQ(p.info.at("oversized_document").at("index"), 1);
  EXPECT_EQ(p.info.at("oversized_document").at("capacity_tokens"), 16 * m);
  EXPECT_TRUE(plan_of(s, {100, 20 * m}, "oracle").feasible());
}

TEST(HybridDp, ADocumentLongerThanAllGpusHoldIsAnOomNamingIt) {
  const Scenario s = test::preset_scenario("dgx-h200", 1, "llama-7b");
  const std::int64_t m = capacity_of(s);
  for (const std::string form : {"published", "oracle"}) {
    const plan::Plan p = plan_of(s, {100, 8 * m + 1}, form);
    ASSERT_FALSE(p.feasible()) << form;
    EXPECT_EQ(p.info.at("oversized_document").at("index"), 1);
    EXPECT_EQ(p.info.at("oversized_document").at("length"), 8 * m + 1);
    EXPECT_EQ(p.info.at("oversized_document").at("capacity_tokens"), 8 * m);
    ASSERT_EQ(p.oom.size(), 1u);
    EXPECT_GT(p.oom[0].tokens_needed, p.oom[0].token_capacity);
  }
}

// The published assignment knows only the lengths: it balances FLOPs. Short documents all run alone, so
// each GPU's FLOPs are the sum over its documents, and the busiest is within 2 % of the mean (LPT).
TEST(HybridDp, ThePublishedAssignmentBalancesFlops) {
  const Scenario s = test::preset_scenario("dgx-h200", 2, "llama-7b");
  const CostModel cost(s.cluster, s.model);
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    Rng rng(seed, 11);
    std::vector<std::int64_t> docs(400);
    for (auto& len : docs) len = 64 + static_cast<std::int64_t>(rng.below(8192));
    const plan::Plan p = plan_of(s, docs);
    ASSERT_TRUE(p.feasible());
    std::vector<double> flops(16, 0.0);
    for (const plan::Sequence& q : p.sequences) {
      const auto len = static_cast<double>(q.length);
      const double pairs = len * (len + 1) / 2;
      flops[static_cast<std::size_t>(group_of(p, q.id).ranks.at(0))] +=
          cost.attention_fwd_flops(pairs) + cost.attention_bwd_flops(pairs) + cost.linear_fwd_flops(len) +
          cost.linear_bwd_flops(len);
    }
    double hi = 0, sum = 0;
    for (const double f : flops) hi = std::max(hi, f), sum += f;
    EXPECT_LT(hi / (sum / 16), 1.02) << "seed " << seed;
  }
}

// Per-rank busy time (forward finish; with only local documents nothing waits) over its mean.
double imbalance(const plan::Plan& p) {
  double hi = 0, sum = 0;
  for (const auto& r : p.predicted.per_rank) {
    hi = std::max(hi, r.seconds);
    sum += r.seconds;
  }
  return hi / (sum / static_cast<double>(p.predicted.per_rank.size()));
}

// Least-loaded assignment of many documents: no GPU is more than 10% over the mean.
TEST(HybridDp, LoadsAreBalancedOnRandomBatchesOfShortDocuments) {
  Scenario s = test::preset_scenario("dgx-h200", 2, "llama-7b");
  s.passes = Passes::fwd;
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    Rng rng(seed, 5);
    std::vector<std::int64_t> docs(300);
    for (auto& len : docs) len = 64 + static_cast<std::int64_t>(rng.below(8192));
    const plan::Plan p = plan_of(s, docs);
    ASSERT_TRUE(p.feasible());
    EXPECT_EQ(p.info.at("cp_documents"), 0);
    EXPECT_LT(imbalance(p), 1.10) << "seed " << seed;
  }
}

// Every micro-batch fits memory, and the plan passes verification, with long and short documents mixed.
TEST(HybridDp, MixedBatchesFitMemoryAndUseRingsOnlyForLongDocuments) {
  const Scenario s = test::preset_scenario("dgx-h200", 2, "llama-7b");
  const std::int64_t m = capacity_of(s);
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    Rng rng(seed, 9);
    std::vector<std::int64_t> docs(40);
    for (auto& len : docs) len = 1 + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(3 * m)));
    const plan::Plan p = plan_of(s, docs);
    ASSERT_TRUE(p.feasible()) << "seed " << seed;
    EXPECT_EQ(plan::verify(p, {m}), std::vector<std::string>{}) << "seed " << seed;
    for (const plan::Sequence& q : p.sequences) {
      EXPECT_EQ(group_of(p, q.id).ranks.size() == 1, q.length <= m)
          << "seed " << seed << " length " << q.length;
    }
  }
}

}  // namespace
}  // namespace zb
