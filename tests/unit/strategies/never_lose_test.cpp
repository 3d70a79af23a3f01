// Zeppelin's planner never settles for less than a baseline could do on the same batch (issue 12): it is
// feasible wherever a baseline is, and by its own estimate never slower than the best fixed-degree
// baseline; each fallback is named in the plan's info, and an OOM names a real rank.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <string>

#include "core/config/system_catalog.hpp"
#include "core/strategies/hybrid_dp_layout.hpp"
#include "core/strategies/packed_cp.hpp"
#include "core/strategies/strategy.hpp"
#include "core/strategies/ulysses.hpp"
#include "core/strategies/zeppelin/partitioner.hpp"
#include "support.hpp"

namespace zb {
namespace {

plan::Plan plan_of(const SystemSpec& sys, const Scenario& s, const CostModel& cost,
                   const std::vector<std::int64_t>& lengths) {
  return make_strategy(sys, s, cost)->make_plan(test::batch_of(lengths));
}

struct Cluster {
  const char* preset;
  int nodes;
  const char* model;
};

// Calls body(cluster, scenario, cost) for each cluster, forward plus backward and forward only.
template <std::size_t N, typename Body>
void for_each_cluster_and_passes(const Cluster (&clusters)[N], Body body) {
  for (const Cluster& c : clusters) {
    for (const Passes passes : {Passes::fwd_bwd, Passes::fwd}) {
      Scenario s = test::preset_scenario(c.preset, c.nodes, c.model);
      s.passes = passes;
      const CostModel cost(s.cluster, s.model);
      body(c, s, cost);
    }
  }
}

// Over random batches on three clusters, the best-of selector's plan is feasible wherever uniform-cp (any
// degree), ring-cp, hybrid-dp (its oracle form, the one the selector weighs), packing-dp or USP (ulysses at
// the shape each batch's longest document asks for) is, and its predicted time is at most the best of them.
TEST(ZeppelinNeverLoses, RandomBatchesOnThreeClustersAreNeverSlowerByItsEstimateThanAnyBaseline) {
  const Cluster clusters[] = {
      {"dgx-h200", 2, "llama-7b"}, {"a800-4nic", 2, "llama-13b"}, {"h800-8nic", 4, "llama-7b"}};
  for (const Cluster& c : clusters) {
    const Scenario s = test::preset_scenario(c.preset, c.nodes, c.model);
    const CostModel cost(s.cluster, s.model);
    const int world = s.cluster.world_size();
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
      Rng rng(seed, 41);
      const std::int64_t per_gpu = cost.token_capacity_per_gpu();
      const auto lengths =
          test::tailed_lengths(rng, per_gpu * world, 128.0, std::min<std::int64_t>(per_gpu * 4, 131072), 2);
      const plan::Plan z = plan_of(test::system("zeppelin", {{"best_of", true}}), s, cost, lengths);
      double best = std::numeric_limits<double>::infinity();
      std::string best_label = "none";
      std::vector<SystemSpec> baselines{
          test::system("ring-cp"), test::system("uniform-cp"),
          test::system("hybrid-dp", {{"form", "oracle"}}), test::system("packing-dp"),
          test::system("ulysses", {{"degree", "per-batch"}, {"ring", "per-batch"}})};
      for (int d = 1; d <= world; d *= 2) {
        if (world % d == 0) baselines.push_back(test::system("uniform-cp", {{"degree", d}}));
      }
      for (const SystemSpec& b : baselines) {
        const plan::Plan p = plan_of(b, s, cost, lengths);
        if (p.feasible() && p.predicted.iteration_seconds < best) {
          best = p.predicted.iteration_seconds;
          best_label = b.label;
        }
      }
      const std::string where =
          std::string(c.preset) + " x" + std::to_string(c.nodes) + " seed " + std::to_string(seed);
      if (best == std::numeric_limits<double>::infinity()) continue;  // no baseline fits: nothing to match
      ASSERT_TRUE(z.feasible()) << where << ": " << z.oom.front().str() << "; " << best_label << " fits";
      EXPECT_LE(z.predicted.iteration_seconds, best * (1 + 1e-9))
          << where << ": zeppelin " << z.predicted.iteration_seconds << " s, " << best_label << " " << best
          << " s; chose " << z.info.value("layout", "?");
    }
  }
}

// The bound that lets the planner skip a packed-CP layout without planning it is never above that
// layout's estimate (uniform-cp at a fixed degree plans exactly that layout), so a skip never drops a
// layout that would have won.
TEST(ZeppelinNeverLoses, ThePackedCpComputeFloorIsNeverAboveThePlansEstimate) {
  const Cluster clusters[] = {{"dgx-h200", 2, "llama-7b"}, {"a800-4nic", 2, "llama-13b"}};
  for (const Cluster& c : clusters) {
    const Scenario s = test::preset_scenario(c.preset, c.nodes, c.model);
    const CostModel cost(s.cluster, s.model);
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      Rng rng(seed, 43);
      const auto lengths = test::tailed_lengths(rng, cost.token_capacity_per_gpu() * 12, 128.0, 32768, 2);
      for (const int degree : {1, 2, 4, 8}) {
        const plan::Plan p = plan_of(test::system("uniform-cp", {{"degree", degree}}), s, cost, lengths);
        if (!p.feasible()) continue;
        EXPECT_LE(packed_cp_compute_floor(cost, lengths, degree, Passes::fwd_bwd),
                  p.predicted.iteration_seconds)
            << c.preset << " seed " << seed << " degree " << degree;
      }
    }
  }
}

// The planner asks two O(documents) bounds before the dealt one: its costliest document's and its average
// group's. Neither is ever above the dealt floor, forward only and forward plus backward, from batches of
// fewer documents than groups (some groups hold nothing) to hundreds of documents, so a degree they rule out
// would have been ruled out by the dealt floor too. With many short documents the average bound is the
// tighter one, which is why it is asked.
TEST(ZeppelinNeverLoses, ThePackedCpQuickFloorsAreNeverAboveTheDealtFloor) {
  const Cluster clusters[] = {{"dgx-h200", 2, "llama-7b"}, {"a800-4nic", 2, "llama-13b"}};
  int average_tighter = 0;
  for_each_cluster_and_passes(clusters, [&](const Cluster& c, const Scenario& s, const CostModel& cost) {
    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
      Rng rng(seed, 53);
      const std::int64_t tokens = seed <= 2 ? 3000 * static_cast<std::int64_t>(seed) : 200'000 * seed;
      const auto lengths = test::tailed_lengths(rng, tokens, 128.0, seed % 2 == 0 ? 2048 : 32768, 2);
      for (const int degree : {1, 2, 4, 8}) {
        const double dealt = packed_cp_compute_floor(cost, lengths, degree, s.passes);
        const double average = packed_cp_average_floor(cost, lengths, degree, s.passes);
        const double document = packed_cp_document_floor(cost, lengths, degree, s.passes);
        const std::string where = std::string(c.preset) + " seed " + std::to_string(seed) + " degree " +
                                  std::to_string(degree) + " documents " + std::to_string(lengths.size());
        EXPECT_GT(average, 0.0) << where;
        EXPECT_LE(average, dealt * (1 + 1e-12)) << where;
        EXPECT_LE(document, dealt * (1 + 1e-12)) << where;
        if (average > document) ++average_tighter;
      }
    }
  });
  EXPECT_GT(average_tighter, 0) << "the average bound never beat the document bound: it would be dead weight";
}

// The same for hybrid-dp's layout: its bound, from the assignment alone, is never above the estimate of
// the plan hybrid-dp makes of that assignment, forward only and forward plus backward, so skipping it
// never drops the layout that would have won; the costliest document's bound is never above it. Batches from
// all-short to a 64k tail, on both clusters.
TEST(ZeppelinNeverLoses, TheHybridDpComputeFloorIsNeverAboveThePlansEstimate) {
  const Cluster clusters[] = {{"dgx-h200", 2, "llama-7b"}, {"a800-4nic", 2, "llama-13b"}};
  int checked = 0;
  for_each_cluster_and_passes(clusters, [&](const Cluster& c, const Scenario& s, const CostModel& cost) {
    const Passes passes = s.passes;
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
      Rng rng(seed, 47);
      const std::int64_t longest = seed % 3 == 0 ? 2048 : seed % 3 == 1 ? 16384 : 65536;
      const auto lengths = test::tailed_lengths(rng, cost.token_capacity_per_gpu() * 10, 128.0, longest, 2);
      // The form Zeppelin weighs (its own cost model's estimate).
      const plan::Plan p = plan_of(test::system("hybrid-dp", {{"form", "oracle"}}), s, cost, lengths);
      if (!p.feasible()) continue;
      const HybridDpSetup setup{"hybrid-dp", "hybrid-dp", passes, HybridDpForm::oracle};
      const double floor = hybrid_dp_compute_floor(setup, cost, lengths);
      EXPECT_GT(floor, 0.0) << c.preset << " seed " << seed;
      // The planner asks the costliest document's bound first: it must never be above the assignment's.
      const double document_floor = hybrid_dp_document_floor(setup, cost, lengths);
      EXPECT_GT(document_floor, 0.0) << c.preset << " seed " << seed;
      EXPECT_LE(document_floor, floor) << c.preset << " seed " << seed << " longest " << longest;
      EXPECT_LE(floor, p.predicted.iteration_seconds)
          << c.preset << " seed " << seed << " longest " << longest;
      ++checked;
    }
  });
  EXPECT_GE(checked, 16) << "too few feasible batches to say anything";
}

// The same for USP's layout: its bound (the average rank's compute, the costliest document's share, the
// average rank's all-to-all) is never above the estimate of the plan ulysses makes at that shape, for
// every usable degree with the ring auto and forward only or forward plus backward, on three clusters
// with tails up to 128k tokens.
TEST(ZeppelinNeverLoses, TheUspComputeFloorIsNeverAboveThePlansEstimate) {
  const Cluster clusters[] = {
      {"dgx-h200", 2, "llama-7b"}, {"a800-4nic", 2, "llama-13b"}, {"h800-8nic", 4, "llama-7b"}};
  int checked = 0;
  for_each_cluster_and_passes(clusters, [&](const Cluster& c, const Scenario& s, const CostModel& cost) {
    const Passes passes = s.passes;
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      Rng rng(seed, 53);
      const std::int64_t longest = seed % 2 == 0 ? 32768 : 131072;
      const auto lengths = test::tailed_lengths(rng, cost.token_capacity_per_gpu() * 8, 128.0, longest, 2);
      const std::vector<int> degrees = ulysses_degrees(cost, 1);
      for (const int u : degrees) {
        const UlyssesSetup shape = ulysses_shape(
            UlyssesSetup{"ulysses", "ulysses", 1, 1, passes, Dealing::balanced, s.model.kv_heads}, cost,
            degrees, lengths, u, 0);
        const plan::Plan p =
            plan_of(test::system("ulysses", {{"degree", u}, {"ring", shape.ring}}), s, cost, lengths);
        if (!p.feasible()) continue;
        EXPECT_LE(ulysses_compute_floor(shape, cost, lengths), p.predicted.iteration_seconds)
            << c.preset << " seed " << seed << " u " << u << " r " << shape.ring;
        ++checked;
      }
    }
  });
  EXPECT_GE(checked, 24) << "too few feasible batches to say anything";
}

TEST(ZeppelinNeverLoses, InfoListsEveryCandidateAndTheChoice) {
  const Scenario s = test::preset_scenario("dgx-h200", 2, "llama-7b");
  const CostModel cost(s.cluster, s.model);
  const plan::Plan p =
      plan_of(test::system("zeppelin", {{"best_of", true}}), s, cost, {65536, 4096, 4096, 2048, 1024, 512});
  ASSERT_TRUE(p.feasible());
  ASSERT_TRUE(p.info.contains("candidates"));
  const auto& candidates = p.info.at("candidates");
  ASSERT_GE(candidates.size(), 2u) << "the own partition and at least one packed-CP layout";
  EXPECT_EQ(candidates.front().at("layout"), "hierarchical");
  double least = std::numeric_limits<double>::infinity();
  for (const auto& c : candidates) {
    if (c.value("feasible", false)) least = std::min(least, c.at("predicted_ms").get<double>());
  }
  EXPECT_DOUBLE_EQ(p.predicted.iteration_seconds * 1e3, least)
      << "the plan kept is the candidate with the least estimate";
  ASSERT_TRUE(p.info.contains("layout"));
  if (p.info.at("layout") == "packed-cp") {
    EXPECT_TRUE(p.info.at("packed_cp").contains("degree"))
        << "the packed layout's facts are kept under one key";
  }
}

// The system under test runs its own code: by default no baseline's layout is planned, and the
// selector is labelled as what it is.
// llama-30b's weights and optimizer state fill a DGX-H200 GPU without tensor parallelism: no token fits.
// Every strategy reports that batch out of memory (a plan with its OOM), none divides by the zero
// capacity (dynamic-cp did: SIGFPE, exit 136).
TEST(EveryStrategy, AModelThatLeavesNoRoomForATokenIsAnOomNotACrash) {
  const Scenario s = test::preset_scenario("dgx-h200", 4, "llama-30b");
  const CostModel cost(s.cluster, s.model);
  ASSERT_LE(cost.token_capacity_per_gpu(), 0) << "the case no longer has a GPU without room";
  const std::vector<std::int64_t> lengths{32768, 4096, 474, 100};
  for (const std::string& name : strategy_names()) {
    const plan::Plan p = plan_of(test::system(name), s, cost, lengths);
    EXPECT_FALSE(p.feasible()) << name;
    EXPECT_FALSE(p.oom.empty()) << name;
  }
}

TEST(ZeppelinNeverLoses, ByDefaultOnlyTheOwnPartitionIsPlanned) {
  const Scenario s = test::preset_scenario("dgx-h200", 2, "llama-7b");
  const CostModel cost(s.cluster, s.model);
  const plan::Plan p = plan_of(test::system("zeppelin"), s, cost, {65536, 4096, 2048});
  ASSERT_TRUE(p.feasible());
  // The partitioner's own layouts only: hierarchical, or flat over equal groups; no baseline's.
  const auto own = [](const nlohmann::json& layout) { return layout == "hierarchical" || layout == "flat"; };
  for (const auto& candidate : p.info.at("candidates")) EXPECT_TRUE(own(candidate.at("layout")));
  EXPECT_TRUE(own(p.info.at("layout")));
  EXPECT_FALSE(p.info.contains("fallback"));
  const SystemInfo& info = *find_system("zeppelin");
  EXPECT_EQ(default_label(info, nlohmann::json::object()), "zeppelin");
  EXPECT_EQ(default_label(info, {{"routing", false}}), "zeppelin[routing=false]");
  EXPECT_EQ(default_label(info, {{"best_of", true}}), "best-of(zeppelin,packed-cp,hybrid-dp,usp)");
  EXPECT_EQ(default_label(info, {{"best_of", true}, {"routing", false}}),
            "best-of(zeppelin[routing=false],packed-cp,hybrid-dp,usp)");
}

// 4 GPUs hold a 0.7·M document each and 8 more GPUs-worth of 0.55·M documents arrive: half of them fit no
// GPU's remaining room as local sequences. They become 2-GPU rings (0.275·M per rank) instead of an OOM.
TEST(ZeppelinPartitioner, ALocalSequenceThatFitsNoGpuBecomesAnIntraNodeRing) {
  Scenario s = test::preset_scenario("dgx-h200", 1, "llama-7b");
  const CostModel cost(s.cluster, s.model);
  const std::int64_t m = cost.token_capacity_per_gpu();
  std::vector<std::int64_t> lengths(4, m * 7 / 10);
  lengths.insert(lengths.end(), 8, m * 55 / 100);
  const zeppelin::Partition part = zeppelin::partition(lengths, cost, {});
  EXPECT_TRUE(part.oom.empty()) << part.oom.front().str();
  int rings = 0;
  for (const auto& g : part.groups) rings += g.level != plan::Level::local;
  EXPECT_GE(rings, 1);
  for (std::size_t r = 0; r < part.gpu_tokens.size(); ++r) EXPECT_LE(part.gpu_tokens[r], m) << "rank " << r;
}

// One document longer than the whole cluster's memory: the OOM names a rank of the cluster, the tokens
// it would need and its capacity.
TEST(ZeppelinPartitioner, AnOomNamesARankAndItsShortfall) {
  Scenario s = test::preset_scenario("dgx-h200", 2, "llama-7b");
  const CostModel cost(s.cluster, s.model);
  const std::int64_t m = cost.token_capacity_per_gpu();
  std::vector<std::int64_t> lengths{m * 17};
  const zeppelin::Partition part = zeppelin::partition(lengths, cost, {});
  ASSERT_EQ(part.oom.size(), 1u);
  EXPECT_GE(part.oom[0].rank, 0);
  EXPECT_LT(part.oom[0].rank, 16);
  EXPECT_GT(part.oom[0].tokens_needed, part.oom[0].token_capacity);
  EXPECT_EQ(part.oom[0].token_capacity, m);
}

}  // namespace
}  // namespace zb
