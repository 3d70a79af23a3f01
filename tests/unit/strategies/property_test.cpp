// Property tests: over hundreds of random batches and clusters, every registered strategy's plan, with
// each value of each of its options, covers every causal pair exactly once, moves every KV range it
// reads, fits memory (or reports OOM), and zigzag rings give every rank the same causal work up to
// chunk rounding.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>

#include "core/plan/plan_format.hpp"
#include "core/plan/verify.hpp"
#include "core/strategies/predict.hpp"
#include "core/strategies/strategy.hpp"
#include "support.hpp"

namespace zb {
namespace {

struct RandomCase {
  Scenario scenario;
  std::vector<std::int64_t> lengths;
};

RandomCase random_case(std::uint64_t seed) {
  Rng rng(seed, 17);
  RandomCase c;
  const int gpn_choices[] = {1, 2, 4, 8};
  auto& cl = c.scenario.cluster;
  cl = find_cluster_preset("dgx-h200")->spec;
  cl.gpus_per_node = gpn_choices[rng.below(4)];
  cl.nodes = 1 + static_cast<int>(rng.below(static_cast<std::uint64_t>(std::max(1, 64 / cl.gpus_per_node))));
  cl.nodes = std::min(cl.nodes, 8);
  const bool shared_nics = cl.gpus_per_node >= 2 && rng.below(2) == 0;  // a800-like: two GPUs per NIC
  cl.nics_per_node = shared_nics ? cl.gpus_per_node / 2 : cl.gpus_per_node;
  cl.gpu_to_nic.clear();
  for (int i = 0; i < cl.gpus_per_node; ++i) cl.gpu_to_nic.push_back(shared_nics ? i / 2 : i);
  c.scenario.model = test::small_model();
  const int world = cl.world_size();
  const int n = 1 + static_cast<int>(rng.below(24));
  for (int i = 0; i < n; ++i) {
    switch (rng.below(5)) {
      case 0:
        c.lengths.push_back(1);
        break;  // single token
      case 1:
        c.lengths.push_back(1 + static_cast<std::int64_t>(rng.below(2ULL * world)));
        break;  // below 2P
      case 2:
        c.lengths.push_back(2 * static_cast<std::int64_t>(rng.below(4096)) + 1);
        break;  // odd
      default:
        c.lengths.push_back(1 + static_cast<std::int64_t>(rng.below(1ULL << 17)));
        break;
    }
  }
  return c;
}

// Every registered strategy and every value of each of its options (one option off its default at a
// time); fixed degrees: 1, which every world allows.
std::vector<SystemSpec> all_systems(int world_size) {
  return test::registered_variants(world_size, {1});
}

// Per-rank causal pairs of each single-sequence zigzag group are equal up to chunk rounding: with
// u = ⌈s/2P⌉, only the ranks holding the short trailing chunks may fall behind, by at most 2·u·s.
void expect_zigzag_balanced(const plan::Plan& p, std::uint64_t seed) {
  std::map<std::pair<int, int>, double> pairs;  // (group, rank) -> pairs
  for (const auto& r : p.ranks) {
    for (const auto& op : r.ops) {
      if (op.kind == plan::OpKind::attention && op.zigzag_kv_rank >= 0) pairs[{op.group, r.rank}] += op.pairs;
    }
  }
  for (const auto& g : p.groups) {
    if (g.sharding != plan::Sharding::zigzag || g.sequences.size() != 1) continue;
    const auto s = p.sequences[static_cast<std::size_t>(g.sequences[0])].length;
    const auto parts = static_cast<std::int64_t>(g.ranks.size());
    const std::int64_t u = (s + 2 * parts - 1) / (2 * parts);
    double lo = 1e300, hi = 0;
    for (int r : g.ranks) {
      lo = std::min(lo, pairs[{g.id, r}]);
      hi = std::max(hi, pairs[{g.id, r}]);
    }
    if (s % (2 * parts) == 0) {
      EXPECT_EQ(lo, hi) << "seed " << seed << " group " << g.id << " s=" << s << " P=" << parts;
    } else {
      EXPECT_LE(hi - lo, 2.0 * static_cast<double>(u) * static_cast<double>(s))
          << "seed " << seed << " group " << g.id;
    }
  }
}

TEST(StrategyProperties, EveryPlanOfTwoHundredRandomBatchesVerifies) {
  int feasible = 0, total = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    const RandomCase c = random_case(seed);
    const CostModel cost(c.scenario.cluster, c.scenario.model);
    for (const auto& sys : all_systems(c.scenario.cluster.world_size())) {
      const plan::Plan p = make_strategy(sys, c.scenario, cost)->make_plan(test::batch_of(c.lengths));
      const auto problems =
          plan::verify(p, {.token_capacity = cost.token_capacity_per_gpu(), .heads = c.scenario.model.heads});
      ASSERT_TRUE(problems.empty()) << "seed " << seed << " system " << sys.label << " world " << p.world_size
                                    << ": " << problems.front();
      ++total;
      if (!p.feasible()) continue;
      ++feasible;
      expect_zigzag_balanced(p, seed);
    }
  }
  // The small model fits almost every batch; a property test that only checks OOM plans proves little.
  EXPECT_GT(feasible, total * 9 / 10);
}

// predicted_floor is what lets a planner skip lowering a candidate, so it must never exceed the estimate
// it stands in for, whatever the strategy, the passes or the cluster; and Zeppelin skips only candidates
// whose floor is at least the estimate of the plan it chose (so a skipped one could not have won).
TEST(StrategyProperties, ThePredictedFloorNeverExceedsThePredictionAndSkipsOnlyLosers) {
  int bounded = 0, skipped = 0;
  for (std::uint64_t seed = 1; seed <= 80; ++seed) {
    RandomCase c = random_case(seed);
    c.scenario.passes = seed % 3 == 0 ? Passes::fwd : Passes::fwd_bwd;
    const CostModel cost(c.scenario.cluster, c.scenario.model);
    for (const auto& sys : all_systems(c.scenario.cluster.world_size())) {
      const plan::Plan p = make_strategy(sys, c.scenario, cost)->make_plan(test::batch_of(c.lengths));
      if (!p.feasible()) continue;
      const double floor = predicted_floor(p, cost, c.scenario.passes);
      EXPECT_GT(floor, 0) << "seed " << seed << " system " << sys.label;
      EXPECT_LE(floor, p.predicted.iteration_seconds * (1 + 1e-12))
          << "seed " << seed << " system " << sys.label << ": floor " << floor << " s above the estimate "
          << p.predicted.iteration_seconds << " s";
      ++bounded;
      if (sys.name != "zeppelin" || !p.info.contains("candidates")) continue;
      for (const auto& candidate : p.info.at("candidates")) {
        if (!candidate.contains("compute_floor_ms")) continue;
        ++skipped;
        EXPECT_GE(candidate.at("compute_floor_ms").get<double>(), p.predicted.iteration_seconds * 1e3)
            << "seed " << seed << " system " << sys.label << ": " << candidate.dump();
      }
    }
  }
  EXPECT_GT(bounded, 500);
  EXPECT_GT(skipped, 0) << "no candidate was skipped: the skip rule went untested";
  std::printf("%d feasible plans bounded, %d Zeppelin candidates skipped by their floor\n", bounded, skipped);
}

TEST(StrategyProperties, SameBatchGivesTheSamePlan) {
  const RandomCase c = random_case(42);
  const CostModel cost(c.scenario.cluster, c.scenario.model);
  for (const auto& sys : all_systems(c.scenario.cluster.world_size())) {
    auto strategy = make_strategy(sys, c.scenario, cost);
    plan::Plan a = strategy->make_plan(test::batch_of(c.lengths));
    plan::Plan b = strategy->make_plan(test::batch_of(c.lengths));
    EXPECT_EQ(to_json(a).dump(), to_json(b).dump()) << sys.label;
  }
}

}  // namespace
}  // namespace zb
