// Zeppelin measured as itself (issue 31): its own partitioner over the whole iteration, its engine filling
// ring waits with local work, and a selector that says what it is.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>

#include "core/plan/verify.hpp"
#include "core/strategies/strategy.hpp"
#include "core/strategies/zeppelin/partitioner.hpp"
#include "support.hpp"

namespace zb {
namespace {

plan::Plan plan_of(const SystemSpec& sys, const Scenario& s, const CostModel& cost,
                   std::vector<std::int64_t> lengths) {
  return make_strategy(sys, s, cost)->make_plan(test::batch_of(std::move(lengths)));
}

// Mostly short documents and a tail of long ones up to `longest`, `tokens` in all.
std::vector<std::int64_t> tailed_batch(Rng& rng, std::int64_t tokens, std::int64_t longest) {
  std::vector<std::int64_t> lengths;
  std::int64_t total = 0;
  while (total < tokens) {
    const double u = rng.uniform();
    auto len = static_cast<std::int64_t>(256.0 * std::pow(static_cast<double>(longest) / 256.0, u * u * u));
    len = std::max<std::int64_t>(1, std::min(len, tokens - total));
    lengths.push_back(len);
    total += len;
  }
  return lengths;
}

// The own planner is what runs by default: no baseline's layout among the candidates, every plan
// verified, every document in exactly one group, and never out of memory where hybrid-dp (one document
// per smallest group that holds it) fits. Random tailed batches on three clusters, several micro-batches.
TEST(ZeppelinOwnPlanner, RandomBatchesPlanOnlyOwnLayoutsThatVerifyAndFitWhereHybridDpFits) {
  const struct {
    const char* preset;
    int nodes;
    const char* model;
  } clusters[] = {{"dgx-h200", 2, "llama-7b"}, {"a800-4nic", 2, "llama-13b"}, {"h800-8nic", 4, "llama-7b"}};
  int planned = 0;
  for (const auto& c : clusters) {
    const Scenario s = test::preset_scenario(c.preset, c.nodes, c.model);
    const CostModel cost(s.cluster, s.model);
    const std::int64_t m = cost.token_capacity_per_gpu();
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      Rng rng(seed, 61);
      const auto lengths =
          tailed_batch(rng, m * s.cluster.world_size() * 2, std::min<std::int64_t>(m * 6, 131072));
      const std::string where = std::string(c.preset) + " seed " + std::to_string(seed);
      const plan::Plan z = plan_of(test::system("zeppelin"), s, cost, lengths);
      const plan::Plan h = plan_of(test::system("hybrid-dp"), s, cost, lengths);
      if (h.feasible()) {
        ASSERT_TRUE(z.feasible()) << where << ": " << z.oom.front().str();
      }
      if (!z.feasible()) continue;
      ++planned;
      EXPECT_EQ(z.info.at("layout"), "hierarchical") << where;
      for (const auto& candidate : z.info.at("candidates"))
        EXPECT_EQ(candidate.at("layout"), "hierarchical") << where;
      const auto problems = plan::verify(z);
      EXPECT_TRUE(problems.empty()) << where << ": " << problems.front();
      std::multiset<std::int64_t> planned_lengths;
      for (const auto& seq : z.sequences) planned_lengths.insert(seq.length);
      EXPECT_EQ(planned_lengths, std::multiset<std::int64_t>(lengths.begin(), lengths.end())) << where;
    }
  }
  EXPECT_GE(planned, 10) << "too few feasible batches to say anything";
}

// The whole iteration is partitioned at once: with four micro-batch slots, the longest document gets the
// ring the whole iteration's balance needs. Formed by token count and balanced one by one, each micro-batch
// got one of the four longest documents and a quarter of the load target, so each took a far wider ring.
TEST(ZeppelinOwnPlanner, ALongDocumentTakesTheRingTheWholeIterationNeedsNotOneSizedToAMicroBatch) {
  const Scenario s = test::preset_scenario("h800-8nic", 2, "llama-3b");
  const CostModel cost(s.cluster, s.model);
  const std::int64_t m = cost.token_capacity_per_gpu();
  // Four documents that each fit one GPU, and short ones: memory decides no degree here, balance does.
  std::vector<std::int64_t> lengths{m * 9 / 10, m * 9 / 10 - 100, m * 8 / 10, m * 8 / 10 - 100};
  while (static_cast<std::int64_t>(lengths.size()) < 400) lengths.push_back(m / 16);
  zeppelin::PartitionOptions whole;
  whole.backward = true;
  whole.include_linear = true;
  whole.micro_batches = 4;
  const auto degrees = zeppelin::ring_degrees(lengths, cost, whole);
  // The same documents in a micro-batch of their own (a quarter of the batch): its load target is smaller.
  std::vector<std::int64_t> quarter{lengths[0]};
  for (std::size_t i = 4; i < lengths.size(); i += 4) quarter.push_back(lengths[i]);
  zeppelin::PartitionOptions alone = whole;
  alone.micro_batches = 1;
  const auto quarter_degrees = zeppelin::ring_degrees(quarter, cost, alone);
  EXPECT_LT(degrees[0], quarter_degrees[0])
      << "the longest document's ring is no narrower: " << degrees[0] << " against " << quarter_degrees[0];
  const zeppelin::Partition part = zeppelin::partition(lengths, cost, whole);
  ASSERT_TRUE(part.oom.empty()) << part.oom.front().str();
  std::vector<int> seen(lengths.size(), 0);
  for (const auto& g : part.groups) {
    EXPECT_GE(g.micro_batch, 0);
    EXPECT_LT(g.micro_batch, 4);
    for (const int d : g.docs) ++seen[static_cast<std::size_t>(d)];
  }
  for (std::size_t d = 0; d < lengths.size(); ++d) EXPECT_EQ(seen[d], 1) << "document " << d;
  for (std::size_t r = 0; r < part.gpu_tokens.size(); ++r) EXPECT_LE(part.gpu_tokens[r], m) << "rank " << r;
}

// The engine puts local work where a ring step waits for its K/V: one long document whose ring spans both
// nodes without routing (each step's transfer outlasts its compute) and many short documents. Some rank
// runs a local call between two steps of the ring, and the plan still verifies.
TEST(ZeppelinOwnPlanner, TheEngineRunsLocalWorkBetweenTheStepsOfARingThatWaits) {
  Scenario s = test::preset_scenario("h800-8nic", 2, "llama-7b");
  const CostModel cost(s.cluster, s.model);
  std::vector<std::int64_t> lengths{98304};
  lengths.insert(lengths.end(), 200, 1024);
  const plan::Plan p = plan_of(test::system("zeppelin", {{"routing", false}}), s, cost, lengths);
  ASSERT_TRUE(p.feasible()) << p.oom.front().str();
  EXPECT_GT(test::local_calls_between_ring_steps(p), 0) << "no local call between two steps of a ring";
  const auto problems = plan::verify(p);
  EXPECT_TRUE(problems.empty()) << problems.front();
}

// The selector is an explicit option, never the default, and its label says what it is.
TEST(ZeppelinOwnPlanner, TheBestOfSelectorIsExplicitAndLabelledAsSuch) {
  const SystemInfo& info = *find_system("zeppelin");
  EXPECT_EQ(info.default_options().at("best_of"), false);
  EXPECT_EQ(default_label(info, {{"best_of", true}}), "best-of(zeppelin,packed-cp,hybrid-dp,usp)");
  const Scenario s = test::preset_scenario("dgx-h200", 2, "llama-7b");
  const CostModel cost(s.cluster, s.model);
  Rng rng(3, 61);
  const auto lengths = tailed_batch(rng, cost.token_capacity_per_gpu() * 16, 65536);
  const plan::Plan selector = plan_of(test::system("zeppelin", {{"best_of", true}}), s, cost, lengths);
  std::set<std::string> layouts;
  for (const auto& candidate : selector.info.at("candidates")) layouts.insert(candidate.at("layout"));
  EXPECT_GT(layouts.size(), 1u) << "the selector planned no baseline layout";
}

}  // namespace
}  // namespace zb
