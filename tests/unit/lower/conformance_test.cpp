// Properties of the lowering over random clusters and batches, for every registered strategy, and the
// executor conformance suite: every executor walks the same instructions in the same order.
//   * every lowered plan passes lower::verify (matching, keys, collectives, rendezvous safety);
//   * the backward pass returns each owner's dK/dV to it, and moves every remap back reversed;
//   * the simulator with free transfers (infinite bandwidth, zero latency) gives exactly the estimate's
//     compute-only schedule, instruction by instruction (to the rounding of SimGrid's clock);
//   * the simulator moves, between every pair of GPUs, exactly the bytes of the Program's legs.
// The reference executor's half of the suite (its per-rank compute order) is in
// tests/integration/conformance_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "core/common/rng.hpp"
#include "core/exec/sim/platform.hpp"
#include "core/exec/sim/simulate.hpp"
#include "core/exec/sim/task_graph.hpp"
#include "core/lower/estimate.hpp"
#include "core/lower/lower.hpp"
#include "core/lower/verify_program.hpp"
#include "core/strategies/strategy.hpp"
#include "tests/unit/strategies/support.hpp"

namespace zb {
namespace {

using Case = test::LoweringCase;

Case random_case(std::uint64_t seed) {
  Rng rng(seed, 29);
  return test::random_lowering_case(rng);
}

struct Lowered {
  Case c;
  CostModel cost;
  plan::Plan plan;
  lower::Program program;
};

template <typename Fn>
void for_every_lowered_plan(int seeds, Fn&& check) {
  for (int seed = 0; seed < seeds; ++seed) {
    const Case c = random_case(static_cast<std::uint64_t>(seed));
    const CostModel cost(c.scenario.cluster, c.scenario.model);
    for (const SystemSpec& system : test::registered_variants(c.scenario.cluster.world_size(), {1})) {
      const auto strategy = make_strategy(system, c.scenario, cost);
      const plan::Plan p = strategy->make_plan(test::batch_of(c.lengths));
      if (!p.feasible()) continue;
      SCOPED_TRACE("seed " + std::to_string(seed) + ", " + system.label + ", " +
                   std::to_string(p.world_size) + " ranks");
      const lower::Program program = lower::lower(p, cost, {.backward = true});
      check(p, program, cost, c.scenario);
    }
  }
}

TEST(LoweringProperty, EveryStrategyLowersToAVerifiedProgram) {
  for_every_lowered_plan(
      24, [](const plan::Plan&, const lower::Program& program, const CostModel&, const Scenario&) {
        const auto problems = lower::verify(program);
        EXPECT_TRUE(problems.empty()) << problems.front();
      });
}

TEST(LoweringProperty, BackwardReturnsEveryOwnersGradientAndReversesEveryRemap) {
  for_every_lowered_plan(
      24, [](const plan::Plan&, const lower::Program& program, const CostModel&, const Scenario&) {
        // Each forward K/V message has a backward twin and a dK/dV accumulator on the same hop; every owner
        // whose K/V left it gets exactly one finished dK/dV back per group.
        std::map<std::tuple<int, int, int>, int> forward_kv, backward_kv, accumulators;  // (src, dst, group)
        std::map<std::pair<int, int>, int> sent_away, returned;                          // (owner, group)
        std::int64_t remap_forward = 0, remap_backward = 0;
        for (const auto& m : program.messages) {
          if (m.purpose == lower::Purpose::remap)
            (m.pass == Pass::fwd ? remap_forward : remap_backward) += m.bytes;
          if (m.kv_owner < 0) continue;
          if (m.purpose == lower::Purpose::kv)
            ++(m.pass == Pass::fwd ? forward_kv : backward_kv)[{m.src, m.dst, m.group}];
          if (m.purpose == lower::Purpose::kv && m.pass == Pass::fwd && m.src == m.kv_owner)
            ++sent_away[{m.kv_owner, m.group}];
          if (m.purpose == lower::Purpose::dkv && m.dst == m.kv_owner) ++returned[{m.kv_owner, m.group}];
          if (m.purpose == lower::Purpose::dkv && m.dst != m.kv_owner)
            ++accumulators[{m.src, m.dst, m.group}];
        }
        EXPECT_EQ(forward_kv, backward_kv);
        EXPECT_EQ(sent_away, returned);
        EXPECT_EQ(remap_forward, remap_backward);
        for (const auto& [hop, count] : accumulators) EXPECT_LE(count, forward_kv[hop]);
      });
}

// Lowered without rows (what the planner's estimate lowers), a plan gives the same Program but for the
// messages' slices: every instruction and message the same field by field, and the same estimate.
TEST(LoweringProperty, WithoutRowsTheProgramIsTheSameButForTheSlices) {
  std::size_t listed = 0;  // slices of the Programs with rows: the property compared something
  for_every_lowered_plan(16, [&listed](const plan::Plan& p, const lower::Program& with, const CostModel& cost,
                                       const Scenario&) {
    const lower::Program without = lower::lower(p, cost, {.backward = true, .rows = false});
    EXPECT_TRUE(with.rows);
    EXPECT_FALSE(without.rows);
    ASSERT_EQ(without.messages.size(), with.messages.size());
    for (std::size_t i = 0; i < with.messages.size(); ++i) {
      const lower::Message &a = with.messages[i], &b = without.messages[i];
      listed += a.slices.size();
      EXPECT_TRUE(b.slices.empty()) << "message " << i;
      EXPECT_EQ(std::tie(a.pass, a.purpose, a.src, a.dst, a.group, a.step, a.kv_owner, a.bytes, a.collective,
                         a.routed, a.readers),
                std::tie(b.pass, b.purpose, b.src, b.dst, b.group, b.step, b.kv_owner, b.bytes, b.collective,
                         b.routed, b.readers))
          << "message " << i;
    }
    ASSERT_EQ(without.ranks.size(), with.ranks.size());
    for (std::size_t r = 0; r < with.ranks.size(); ++r) {
      const auto &a = with.ranks[r].instrs, &b = without.ranks[r].instrs;
      ASSERT_EQ(b.size(), a.size()) << "rank " << r;
      for (std::size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(std::tie(a[i].kind, a[i].stream, a[i].peer, a[i].match, a[i].message, a[i].bytes,
                           a[i].chunks, a[i].seconds, a[i].offset, a[i].key, a[i].name),
                  std::tie(b[i].kind, b[i].stream, b[i].peer, b[i].match, b[i].message, b[i].bytes,
                           b[i].chunks, b[i].seconds, b[i].offset, b[i].key, b[i].name))
            << lower::describe(with, static_cast<int>(r), static_cast<int>(i));
        EXPECT_TRUE(std::equal(a[i].deps.begin(), a[i].deps.end(), b[i].deps.begin(), b[i].deps.end()));
        EXPECT_TRUE(std::equal(a[i].reads.begin(), a[i].reads.end(), b[i].reads.begin(), b[i].reads.end()));
      }
    }
    const lower::ProgramEstimate ea = lower::estimate(with, lower::nominal_transfers(with, cost));
    const lower::ProgramEstimate eb = lower::estimate(without, lower::nominal_transfers(without, cost));
    EXPECT_EQ(ea.forward, eb.forward);
    EXPECT_EQ(ea.backward, eb.backward);
  });
  EXPECT_GT(listed, 0U);
}

TEST(LoweringProperty, VerifyCatchesAnInstructionThatReadsWhatItDoesNotWaitFor) {
  int corrupted = 0;
  for_every_lowered_plan(
      4, [&](const plan::Plan&, const lower::Program& program, const CostModel&, const Scenario&) {
        for (int r = 0; r < program.world_size; ++r) {
          const auto& list = program.ranks[static_cast<std::size_t>(r)].instrs;
          for (std::size_t i = 0; i < list.size(); ++i) {
            if (list[i].kind != lower::InstrKind::attention || list[i].reads.empty()) continue;
            lower::Program broken = program;
            broken.ranks[static_cast<std::size_t>(r)].instrs[i].deps.clear();
            const auto problems = lower::verify(broken);
            ASSERT_FALSE(problems.empty());
            EXPECT_NE(problems.front().find("a race"), std::string::npos) << problems.front();
            EXPECT_NE(problems.front().find("rank " + std::to_string(r) + " instr " + std::to_string(i)),
                      std::string::npos)
                << problems.front();
            ++corrupted;
            return;  // one corruption per program is enough
          }
        }
      });
  EXPECT_GT(corrupted, 3);
}

TEST(ExecutorConformance, SimulatorWithFreeTransfersEqualsTheComputeOnlyEstimateExactly) {
  for_every_lowered_plan(
      8, [](const plan::Plan&, const lower::Program& program, const CostModel& cost, const Scenario& s) {
        const lower::Schedule expected = lower::schedule(program, lower::free_transfers());
        ASSERT_TRUE(expected.complete);
        const sim::Platform platform(s.cluster, cost.profile());
        const sim::TaskGraph graph(program, {.free_transfers = true, .compute_scale = {}});
        const sim::TaskTimes times = sim::simulate_isolated(platform, graph);
        for (int r = 0; r < program.world_size; ++r) {
          const auto& list = program.ranks[static_cast<std::size_t>(r)].instrs;
          for (std::size_t i = 0; i < list.size(); ++i) {
            if (!lower::is_compute(list[i])) continue;
            const auto task = static_cast<std::size_t>(graph.of(r, static_cast<int>(i)).done);
            // Equal up to the rounding of SimGrid's clock, which advances by differences (now += date − now)
            // rather than jumping to each timer's date: a few ulps over long chains of compute.
            const double start = expected.start[static_cast<std::size_t>(r)][i],
                         end = expected.end[static_cast<std::size_t>(r)][i];
            ASSERT_NEAR(times.start[task], start, 1e-12 * std::max(1.0, start))
                << lower::describe(program, r, static_cast<int>(i));
            ASSERT_NEAR(times.end[task], end, 1e-12 * std::max(1.0, end))
                << lower::describe(program, r, static_cast<int>(i));
          }
        }
      });
}

TEST(ExecutorConformance, SimulatorMovesExactlyTheProgramsBytesBetweenEveryPair) {
  for_every_lowered_plan(
      8, [](const plan::Plan&, const lower::Program& program, const CostModel&, const Scenario&) {
        std::map<std::pair<int, int>, double> program_bytes, simulated_bytes;
        for (int r = 0; r < program.world_size; ++r) {
          for (const auto& in : program.ranks[static_cast<std::size_t>(r)].instrs) {
            if (in.kind == lower::InstrKind::send && in.bytes > 0)
              program_bytes[{r, in.peer}] += static_cast<double>(in.bytes);
          }
        }
        for (const auto& c : program.collectives) {
          for (const int m : c.messages) {
            const auto& msg = program.messages[static_cast<std::size_t>(m)];
            if (msg.bytes > 0) program_bytes[{msg.src, msg.dst}] += static_cast<double>(msg.bytes);
          }
          // An opaque collective (tensor parallelism's hidden rows) moves a ring's worth: an all-gather or
          // reduce-scatter p − 1 steps of each member's `bytes` to the next member, an all-reduce 2(p − 1)
          // steps of bytes / p.
          const auto p = static_cast<int>(c.ranks.size());
          if (!c.messages.empty() || p < 2 || c.bytes <= 0) continue;
          const bool reduce = c.kind == lower::CollectiveKind::all_reduce;
          const double step = reduce ? static_cast<double>(c.bytes) / p : static_cast<double>(c.bytes);
          for (int k = 0; k < p; ++k) {
            program_bytes[{c.ranks[static_cast<std::size_t>(k)],
                           c.ranks[static_cast<std::size_t>((k + 1) % p)]}] +=
                step * (reduce ? 2 * (p - 1) : p - 1);
          }
        }
        const sim::TaskGraph graph(program);
        for (const auto& f : graph.flows()) {
          const auto& t = graph.tasks()[static_cast<std::size_t>(f.task)];
          simulated_bytes[{t.rank, t.dst}] += t.amount;
        }
        EXPECT_EQ(program_bytes, simulated_bytes);
      });
}

}  // namespace
}  // namespace zb
