// dynamic-cp as a specification (docs/STRATEGIES.md "dynamic-cp"). By default current Megatron-LM's
// packing-aware schedule (every micro-batch spans all GPUs in aligned power-of-two groups, each group's
// documents one THD pack; its scheduler's own rules: dynamic_cp_packing_test.cpp). With "schedule":
// "per-document", Megatron-Core's earlier hybrid-CP schedule:
// CP size = the next power of two of ⌈s / max_seqlen_per_rank⌉; rounds of consecutive-GPU groups that
// leave no GPU idle (fill_empty_gpus widens the smallest group); trim_overload hands a round's surplus to
// the next; every document is its own micro-batch on a zigzag ring of its whole group; documents whose
// CP size exceeds the world, or whose share exceeds a GPU, are OOMs naming them.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "core/common/rng.hpp"
#include "core/plan/verify.hpp"
#include "core/strategies/dynamic_cp_schedule.hpp"
#include "core/strategies/strategy.hpp"
#include "support.hpp"

namespace zb {
namespace {

plan::Plan plan_of(const Scenario& s, std::vector<std::int64_t> lengths,
                   nlohmann::json options = nlohmann::json::object()) {
  const CostModel cost(s.cluster, s.model);
  return make_strategy(test::system("dynamic-cp", std::move(options)), s, cost)
      ->make_plan(test::batch_of(std::move(lengths)));
}

std::int64_t capacity_of(const Scenario& s) {
  return CostModel(s.cluster, s.model).token_capacity_per_gpu();
}

// (first rank, size, documents) of each group of each round.
using Shape = std::vector<std::vector<std::tuple<int, int, std::vector<int>>>>;
Shape shape(const std::vector<DynamicCpRound>& rounds) {
  Shape out;
  for (const DynamicCpRound& r : rounds) {
    out.emplace_back();
    for (const DynamicCpGroup& g : r.groups) out.back().emplace_back(g.first_rank, g.size, g.docs);
  }
  return out;
}

TEST(DynamicCp, CpSizeIsTheNextPowerOfTwoOfTheRanksADocumentNeeds) {
  EXPECT_EQ(dynamic_cp_size(1, 100), 1);
  EXPECT_EQ(dynamic_cp_size(100, 100), 1);
  EXPECT_EQ(dynamic_cp_size(101, 100), 2);
  EXPECT_EQ(dynamic_cp_size(300, 100), 4);  // ⌈3⌉ → 4
  EXPECT_EQ(dynamic_cp_size(400, 100), 4);
  EXPECT_EQ(dynamic_cp_size(401, 100), 8);
}

// A 4-GPU document and a 1-GPU one on 8 GPUs: the short one's group doubles (1 → 2 → 4) until no GPU
// idles, so it runs as a 4-GPU ring beside the long one.
TEST(DynamicCp, FillEmptyGpusWidensTheSmallestGroupUntilNoGpuIdles) {
  EXPECT_EQ(shape(schedule_dynamic_cp({300, 50}, 100, 8)), (Shape{{{0, 4, {0}}, {4, 4, {1}}}}));
}

// Three one-GPU documents on two GPUs: the third joins the least-loaded group (the first, on a tie);
// trim_overload then gives it back, as that evens the round, and the next round runs it alone on a group
// widened to both GPUs.
TEST(DynamicCp, TrimOverloadMovesTheSurplusToTheNextRound) {
  EXPECT_EQ(shape(schedule_dynamic_cp({100, 100, 100}, 100, 2)),
            (Shape{{{0, 1, {0}}, {1, 1, {1}}}, {{0, 2, {2}}}}));
}

// Longest first, each on free GPUs while there are enough; the groups tile the GPUs in order.
TEST(DynamicCp, DocumentsTakeFreeGpusLongestFirst) {
  EXPECT_EQ(shape(schedule_dynamic_cp({400, 150, 400}, 100, 8)),
            (Shape{{{0, 4, {0}}, {4, 4, {2}}}, {{0, 8, {1}}}}));
}

TEST(DynamicCp, ADocumentNeedingMoreGpusThanTheWorldIsAnOomNamingIt) {
  const Scenario s = test::preset_scenario("dgx-h200", 1, "llama-7b");
  const std::int64_t m = capacity_of(s);
  const plan::Plan p = plan_of(s, {100, 8 * m + 1});
  ASSERT_FALSE(p.feasible());
  const auto& doc = p.info.at("oversized_document");
  EXPECT_EQ(doc.at("index"), 1);
  EXPECT_EQ(doc.at("length"), 8 * m + 1);
  EXPECT_EQ(doc.at("cp_size"), 16);
  EXPECT_EQ(doc.at("capacity_tokens"), 8 * m);
  ASSERT_EQ(p.oom.size(), 1u);
  EXPECT_GT(p.oom[0].tokens_needed, p.oom[0].token_capacity);
}

// max_seqlen_per_rank above what a GPU holds: a document it leaves on too few GPUs is an OOM against the
// GPU's capacity, not an overcommitted plan.
TEST(DynamicCp, AShareAboveTheGpuCapacityIsAnOomNamingTheCapacity) {
  const Scenario s = test::preset_scenario("dgx-h200", 1, "llama-7b");
  const std::int64_t m = capacity_of(s);
  const plan::Plan p = plan_of(s, {m + m / 2}, {{"max_seqlen_per_rank", 2 * m}});
  ASSERT_FALSE(p.feasible());
  EXPECT_EQ(p.info.at("oversized_document").at("cp_size"), 1);
  EXPECT_EQ(p.info.at("oversized_document").at("capacity_tokens"), m);
  ASSERT_EQ(p.oom.size(), 1u);
  EXPECT_EQ(p.oom[0].tokens_needed, m + m / 2);
  EXPECT_EQ(p.oom[0].token_capacity, m);
}

// 10–70 documents, a quarter of them up to 6 GPUs' capacity `m`, the rest up to 16K tokens.
std::vector<std::int64_t> mixed_batch(std::uint64_t seed, std::int64_t m) {
  Rng rng(seed, 13);
  std::vector<std::int64_t> docs(10 + rng.below(60));
  for (auto& len : docs)
    len = 1 +
          static_cast<std::int64_t>(rng.below(rng.below(4) == 0 ? static_cast<std::uint64_t>(6 * m) : 16384));
  return docs;
}

// On random mixed batches: the plan verifies; every document's group is at least its CP size, a power of
// two, on consecutive GPUs; every GPU works in every round; each GPU holds one document per micro-batch.
TEST(DynamicCp, RandomBatchesGiveGapFreeRoundsOfOneDocumentMicroBatches) {
  const Scenario s = test::preset_scenario("dgx-h200", 2, "llama-7b");
  const std::int64_t m = capacity_of(s);
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    const std::vector<std::int64_t> docs = mixed_batch(seed, m);
    const plan::Plan p = plan_of(s, docs, {{"schedule", "per-document"}});
    ASSERT_TRUE(p.feasible()) << "seed " << seed;
    EXPECT_EQ(plan::verify(p, {m}), std::vector<std::string>{}) << "seed " << seed;
    std::map<int, std::set<int>> busy;  // micro-batch → ranks
    for (const plan::Group& g : p.groups) {
      const auto len = p.sequences[static_cast<std::size_t>(g.sequences.at(0))].length;
      const auto size = static_cast<int>(g.ranks.size());
      EXPECT_EQ(g.sequences.size(), 1u);
      EXPECT_GE(size, dynamic_cp_size(len, m)) << "seed " << seed;
      EXPECT_EQ(size & (size - 1), 0) << "seed " << seed;
      for (int i = 0; i < size; ++i) {
        EXPECT_EQ(g.ranks[static_cast<std::size_t>(i)], g.ranks[0] + i);
        EXPECT_TRUE(busy[g.micro_batch].insert(g.ranks[static_cast<std::size_t>(i)]).second)
            << "seed " << seed;
      }
    }
    for (const auto& round : p.info.at("round_group_sizes")) {
      int sum = 0;
      for (const auto& size : round) sum += size.get<int>();
      EXPECT_EQ(sum, 16) << "seed " << seed;
    }
  }
}

// The default, packing-aware schedule on random mixed batches: the plan verifies (memory included); every
// micro-batch puts every GPU in exactly one group, groups are aligned power-of-two blocks at least each
// of their documents' CP size; short documents share packs, so there are fewer micro-batches than
// documents per GPU would make one at a time.
TEST(DynamicCp, RandomBatchesGiveEveryGpuOnePackPerMicroBatch) {
  const Scenario s = test::preset_scenario("dgx-h200", 2, "llama-7b");
  const std::int64_t m = capacity_of(s);
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    const std::vector<std::int64_t> docs = mixed_batch(seed, m);
    const plan::Plan p = plan_of(s, docs);
    ASSERT_TRUE(p.feasible()) << "seed " << seed;
    EXPECT_EQ(p.info.at("schedule"), "packing-aware");
    EXPECT_EQ(plan::verify(p, {m}), std::vector<std::string>{}) << "seed " << seed;
    std::map<int, std::set<int>> busy;  // micro-batch → ranks
    for (const plan::Group& g : p.groups) {
      const auto size = static_cast<int>(g.ranks.size());
      EXPECT_EQ(size & (size - 1), 0) << "seed " << seed;
      EXPECT_EQ(g.ranks[0] % size, 0) << "seed " << seed;
      for (const int seq : g.sequences)
        EXPECT_GE(size, dynamic_cp_size(p.sequences[static_cast<std::size_t>(seq)].length, m))
            << "seed " << seed;
      for (int i = 0; i < size; ++i) {
        EXPECT_EQ(g.ranks[static_cast<std::size_t>(i)], g.ranks[0] + i);
        EXPECT_TRUE(busy[g.micro_batch].insert(g.ranks[static_cast<std::size_t>(i)]).second)
            << "seed " << seed;
      }
    }
    for (const auto& [mb, ranks] : busy) EXPECT_EQ(ranks.size(), 16u) << "seed " << seed << " mb " << mb;
    EXPECT_LT(busy.size(), docs.size()) << "seed " << seed;
  }
}

// Many short documents: packed several to a GPU in one micro-batch (the per-document schedule runs them
// one micro-batch each).
TEST(DynamicCp, ShortDocumentsShareOnePackPerGpu) {
  const Scenario s = test::preset_scenario("dgx-h200", 1, "llama-7b");
  const plan::Plan packed = plan_of(s, std::vector<std::int64_t>(64, 1000));
  ASSERT_TRUE(packed.feasible());
  EXPECT_EQ(packed.micro_batches, 1);
  EXPECT_EQ(packed.info.at("packs"), 8);
  const plan::Plan one_each = plan_of(s, std::vector<std::int64_t>(64, 1000), {{"schedule", "per-document"}});
  ASSERT_TRUE(one_each.feasible());
  EXPECT_EQ(one_each.micro_batches, 8);
}

}  // namespace
}  // namespace zb
