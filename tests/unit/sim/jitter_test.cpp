// Seeded compute jitter and stragglers (docs/SIMULATOR.md, "Jitter and stragglers"): off by default and
// then bit-identical to the simulator without them; on, the multipliers m(r, i) are a pure function of
// (seed, iteration, rank), differ across seeds, have mean 1 and the asked coefficient of variation, and
// scale exactly the compute the simulator runs.
#include <gtest/gtest.h>

#include <cmath>

#include "core/exec/sim/task_graph.hpp"
#include "tests/unit/sim/sim_test_support.hpp"

namespace zb {
namespace {

using sim_test::add_op;
using sim_test::attention_op;
using sim_test::cluster;
using sim_test::empty_plan;

HardwareProfile jittered(double cv, double straggler_probability = 0) {
  HardwareProfile p = sim_test::flow_model_profile();
  p.compute_jitter = cv;
  p.straggler_probability = straggler_probability;
  return p;
}

// Two attention calls per rank of a 1 × 4 cluster, the second after the first.
plan::Plan compute_plan(const ClusterSpec& c) {
  plan::Plan p = empty_plan(c);
  for (int r = 0; r < p.world_size; ++r) {
    const int a = add_op(p, r, attention_op(4096.0 * 4096.0 / 2 * (r + 1), 4096, {}));
    add_op(p, r, attention_op(1024.0 * 1024.0, 1024, {a}));
  }
  return p;
}

Trace run(const plan::Plan& p, const ClusterSpec& c, const HardwareProfile& profile, std::uint64_t seed,
          int iteration) {
  Scenario s = sim_test::scenario(c, Passes::fwd);
  s.seed = seed;
  const CostModel cost(c, s.model, profile);
  auto executor = make_executor(Backend::sim);
  return execute(*executor, p, s, cost, iteration);
}

std::vector<double> compute_durations(const Trace& t) {
  std::vector<double> out;
  for (const TraceEvent& e : t.events) {
    if (e.track == Track::compute) out.push_back(e.end - e.start);
  }
  return out;
}

TEST(Jitter, OffByDefaultAndThenNoMultipliers) {
  const HardwareProfile profile;
  EXPECT_EQ(profile.compute_jitter, 0.0);
  EXPECT_EQ(profile.straggler_probability, 0.0);
  EXPECT_TRUE(sim::compute_multipliers(profile, 7, 3, 64).empty());
}

TEST(Jitter, OffIsBitIdenticalWhateverTheSeedAndIteration) {
  const ClusterSpec c = cluster(1, 4, 4);
  const plan::Plan p = compute_plan(c);
  const HardwareProfile off = sim_test::flow_model_profile();
  const Trace a = run(p, c, off, 1, 0);
  const Trace b = run(p, c, off, 99, 17);
  EXPECT_EQ(a.layer.forward, b.layer.forward);
  EXPECT_EQ(compute_durations(a), compute_durations(b));
  // And the same as a simulation that never heard of an iteration.
  const Trace plain = sim_test::simulate(p, c, Passes::fwd, off);
  EXPECT_EQ(a.layer.forward, plain.layer.forward);
  EXPECT_EQ(compute_durations(a), compute_durations(plain));
}

TEST(Jitter, ScalesEachRanksComputeByItsMultiplier) {
  const ClusterSpec c = cluster(1, 4, 4);
  const plan::Plan p = compute_plan(c);
  const HardwareProfile on = jittered(0.2, 0.25);
  const Trace base = run(p, c, sim_test::flow_model_profile(), 5, 2);
  const Trace t = run(p, c, on, 5, 2);
  const std::vector<double> m = sim::compute_multipliers(on, 5, 2, c.world_size());
  ASSERT_EQ(m.size(), 4U);
  ASSERT_EQ(base.events.size(), t.events.size());
  for (std::size_t i = 0; i < t.events.size(); ++i) {
    if (t.events[i].track != Track::compute) continue;
    const double expected =
        (base.events[i].end - base.events[i].start) * m[static_cast<std::size_t>(t.events[i].rank)];
    EXPECT_NEAR(t.events[i].end - t.events[i].start, expected, 1e-12 * expected);
  }
}

TEST(Jitter, DeterministicPerSeedAndDifferentAcrossSeedsAndIterations) {
  const HardwareProfile on = jittered(0.1, 0.1);
  const auto a = sim::compute_multipliers(on, 42, 3, 256);
  EXPECT_EQ(a, sim::compute_multipliers(on, 42, 3, 256));
  EXPECT_NE(a, sim::compute_multipliers(on, 43, 3, 256));
  EXPECT_NE(a, sim::compute_multipliers(on, 42, 4, 256));
  // A rank's multiplier depends on (seed, iteration, rank) only: not on the world size, so every system of a
  // scenario (and a smaller cluster) draws the same m(r, i) for the same rank and iteration.
  const auto prefix = sim::compute_multipliers(on, 42, 3, 16);
  for (std::size_t r = 0; r < prefix.size(); ++r) EXPECT_EQ(prefix[r], a[r]);
  // Simulations with the same seed agree to the bit.
  const ClusterSpec c = cluster(1, 4, 4);
  const plan::Plan p = compute_plan(c);
  EXPECT_EQ(compute_durations(run(p, c, on, 42, 3)), compute_durations(run(p, c, on, 42, 3)));
  EXPECT_NE(compute_durations(run(p, c, on, 42, 3)), compute_durations(run(p, c, on, 41, 3)));
}

TEST(Jitter, MeanOneAndTheAskedSpread) {
  const double cv = 0.15;
  const int ranks = 40000;
  const auto m = sim::compute_multipliers(jittered(cv), 11, 0, ranks);
  double sum = 0, sum2 = 0;
  for (const double x : m) {
    EXPECT_GT(x, 0.0);
    sum += x;
    sum2 += x * x;
  }
  const double mean = sum / ranks;
  const double sd = std::sqrt(sum2 / ranks - mean * mean);
  // Standard error of the mean cv/sqrt(n) = 0.00075.
  EXPECT_NEAR(mean, 1.0, 0.004);
  EXPECT_NEAR(sd / mean, cv, 0.01);
}

TEST(Jitter, StragglersAreTheAskedShareAndLeaveTheJitterAsItWas) {
  const int ranks = 40000;
  HardwareProfile on = jittered(0.05, 0.1);
  on.straggler_slowdown = 2.0;
  const auto with = sim::compute_multipliers(on, 3, 9, ranks);
  const auto without = sim::compute_multipliers(jittered(0.05), 3, 9, ranks);
  int stragglers = 0;
  for (int r = 0; r < ranks; ++r) {
    const double ratio = with[static_cast<std::size_t>(r)] / without[static_cast<std::size_t>(r)];
    if (ratio != 1.0) {
      EXPECT_NEAR(ratio, 2.0, 1e-12);
      ++stragglers;
    }
  }
  EXPECT_NEAR(static_cast<double>(stragglers) / ranks, 0.1, 0.006);
  // Stragglers alone: every multiplier is 1 or the slowdown.
  for (const double x : sim::compute_multipliers(jittered(0.0, 0.5), 3, 9, 100))
    EXPECT_TRUE(x == 1.0 || x == 1.5);
}

}  // namespace
}  // namespace zb
