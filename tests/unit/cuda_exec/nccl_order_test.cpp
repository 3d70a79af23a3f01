// The cuda backend's global NCCL order (core/exec/cuda/nccl_order.hpp), checked without a GPU: for every
// registered strategy on random clusters and batches, the order places every comm instruction once,
// respects every dependency (each issue item comes after everything it waits for, on its own rank), has
// both ends of every (src, dst) pair issue their transfers in the same order (NCCL matches same-peer
// calls in order), and a rendezvous replay of it on one comm stream per rank finishes; and on a small
// hand-made program the naive per-rank list order deadlocks where the global order does not.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "core/common/rng.hpp"
#include "core/exec/cuda/nccl_order.hpp"
#include "core/exec/cuda/rendezvous_replay.hpp"
#include "core/lower/estimate.hpp"
#include "core/lower/lower.hpp"
#include "core/lower/verify_program.hpp"
#include "core/strategies/strategy.hpp"
#include "tests/unit/cuda_exec/hand_programs.hpp"
#include "tests/unit/strategies/support.hpp"

namespace zb::cuda {
namespace {

using lower::InstrKind;

using Case = test::LoweringCase;

Case random_case(std::uint64_t seed) {
  Rng rng(seed, 41);
  Case c = test::random_lowering_case(rng);
  // A third of the multi-GPU nodes run tensor parallelism: its sequence-parallel collectives join the order.
  if (c.scenario.cluster.gpus_per_node >= 2 && rng.below(3) == 0) c.scenario.parallelism.tensor = 2;
  return c;
}

template <typename Fn>
int for_every_lowered_plan(int seeds, Fn&& check) {
  int programs = 0;
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
      check(program, cost);
      ++programs;
    }
  }
  return programs;
}

bool is_comm(const lower::Instr& in) {
  return in.kind == InstrKind::send || in.kind == InstrKind::recv || in.kind == InstrKind::collective;
}

// Every property the executor relies on; returns the first violation, empty when there is none.
std::string check_order(const lower::Program& program, const GlobalOrder& order) {
  for (int r = 0; r < program.world_size; ++r) {
    const auto& list = program.ranks[static_cast<std::size_t>(r)].instrs;
    const auto& items = order.issue[static_cast<std::size_t>(r)];
    std::vector<int> position(list.size(), -1);
    int last_compute = -1;
    for (std::size_t k = 0; k < items.size(); ++k) {
      const bool backward = static_cast<int>(k) >= order.first_backward_item[static_cast<std::size_t>(r)];
      std::vector<int> ids;
      if (items[k].compute) {
        ids.push_back(items[k].instr);
        if (items[k].instr <= last_compute)
          return lower::describe(program, r, items[k].instr) + " is issued out of list order";
        last_compute = items[k].instr;
      }
      for (const NcclCall& call : items[k].calls) ids.push_back(call.instr);
      for (const int id : ids) {
        if (position[static_cast<std::size_t>(id)] >= 0)
          return lower::describe(program, r, id) + " is issued twice";
        if ((list[static_cast<std::size_t>(id)].pass == Pass::bwd) != backward)
          return lower::describe(program, r, id) + " is issued in the other pass";
        position[static_cast<std::size_t>(id)] = static_cast<int>(k);
      }
      for (const int id : ids)
        for (const int d : resolved_deps(program, r, id))
          if (position[static_cast<std::size_t>(d)] < 0 ||
              position[static_cast<std::size_t>(d)] >= static_cast<int>(k))
            return lower::describe(program, r, id) + " is issued before its dependency " +
                   lower::describe(program, r, d);
    }
    for (std::size_t i = 0; i < list.size(); ++i)
      if ((is_comm(list[i]) || lower::is_compute(list[i])) && position[i] < 0)
        return lower::describe(program, r, static_cast<int>(i)) + " is never issued";
  }
  // Both ends of each ordered pair see its transfers in one order on each communicator.
  using Channel = std::tuple<Communicator, int, int>;  // (communicator, src, dst)
  std::map<Channel, std::vector<int>> sends, recvs;    // → send instr ids
  for (int r = 0; r < program.world_size; ++r)
    for (const IssueItem& item : order.issue[static_cast<std::size_t>(r)]) {
      if (!item.compute && item.communicator != order.steps[static_cast<std::size_t>(item.step)].communicator)
        return "rank " + std::to_string(r) + " issues a step on another communicator than the step's";
      for (const NcclCall& call : item.calls) {
        if (call.kind == CallKind::send) sends[{item.communicator, r, call.peer}].push_back(call.instr);
        if (call.kind == CallKind::recv)
          recvs[{item.communicator, call.peer, r}].push_back(program.instr(r, call.instr).match);
      }
    }
  if (sends != recvs) return "the two ends of a pair issue their transfers in different orders";
  return "";
}

TEST(NcclOrder, EveryStrategyOrdersEveryCallOnceAfterItsDependencies) {
  const int programs = for_every_lowered_plan(16, [](const lower::Program& program, const CostModel& cost) {
    ASSERT_TRUE(lower::verify(program).empty());
    const GlobalOrder order =
        derive_order(program, lower::schedule(program, lower::nominal_transfers(program, cost)));
    EXPECT_EQ(check_order(program, order), "");
    EXPECT_EQ(check_order(program, derive_order(program)), "");
  });
  EXPECT_GT(programs, 100);
}

// The rail communicator's transfers: by definition, the NIC legs of routed messages between the same
// local rank on two nodes.
bool is_rail_transfer(const lower::Program& program, int src, const lower::Instr& send) {
  const int g = program.gpus_per_node;
  return send.leg == lower::LegRole::nic && src % g == send.peer % g && src / g != send.peer / g;
}

TEST(NcclOrder, RoutedHopsBetweenOneLocalRankOnTwoNodesAreRailStepsAndNoStepMixesCommunicators) {
  int rail_steps = 0, world_steps_with_nic_legs = 0;
  for_every_lowered_plan(16, [&](const lower::Program& program, const CostModel& cost) {
    const GlobalOrder order =
        derive_order(program, lower::schedule(program, lower::nominal_transfers(program, cost)));
    for (const CommStep& step : order.steps) {
      for (const auto& [src, id] : step.sends) {
        const lower::Instr& send = program.instr(src, id);
        ASSERT_EQ(step.communicator == Communicator::rail, is_rail_transfer(program, src, send))
            << lower::describe(program, src, id);
        if (step.communicator == Communicator::rail) {
          EXPECT_EQ(rank_in(program, Communicator::rail, src), src / program.gpus_per_node);
          EXPECT_NE(rank_in(program, Communicator::rail, src),
                    rank_in(program, Communicator::rail, send.peer));
        }
        if (step.communicator == Communicator::world && send.leg == lower::LegRole::nic)
          ++world_steps_with_nic_legs;
      }
      if (step.communicator == Communicator::rail) ++rail_steps;
    }
  });
  EXPECT_GT(rail_steps, 20);  // zeppelin's routed plans over several nodes
  RecordProperty("rail_steps", rail_steps);
  RecordProperty("nic_legs_between_different_local_ranks", world_steps_with_nic_legs);
}

TEST(NcclOrder, EveryStrategysOrderReplaysWithoutDeadlockOnOneCommStreamPerRank) {
  int with_transfers = 0, with_collectives = 0;
  for_every_lowered_plan(16, [&](const lower::Program& program, const CostModel& cost) {
    const GlobalOrder order =
        derive_order(program, lower::schedule(program, lower::nominal_transfers(program, cost)));
    const ReplayResult replay = rendezvous_replay(program, posts_of(order));
    EXPECT_TRUE(replay.complete) << replay.explanation;
    if (!order.steps.empty()) ++with_transfers;
    for (const CommStep& step : order.steps) {
      if (step.collective >= 0) {
        ++with_collectives;  // llama3-cp's K/V all-gathers, ulysses' all-to-alls, remaps
        break;
      }
    }
  });
  EXPECT_GT(with_transfers, 50);
  EXPECT_GT(with_collectives, 10);
}

TEST(NcclOrder, TheReplayCatchesAnOrderWhoseTwoEndsDisagree) {
  // Swapping two of a rank's posts that talk to one peer breaks the matching: the replay must say so.
  int broken = 0;
  for_every_lowered_plan(4, [&](const lower::Program& program, const CostModel&) {
    if (broken >= 5) return;
    RankPosts posts = posts_of(derive_order(program));
    for (auto& rank_posts : posts) {
      for (std::size_t a = 0; a + 1 < rank_posts.size(); ++a) {
        if (rank_posts[a].size() != 1 || rank_posts[a + 1].size() != 1) continue;
        std::swap(rank_posts[a], rank_posts[a + 1]);
        const ReplayResult replay = rendezvous_replay(program, posts);
        std::swap(rank_posts[a], rank_posts[a + 1]);
        if (replay.complete) continue;  // independent posts may swap safely
        EXPECT_FALSE(replay.stuck.empty());
        EXPECT_NE(replay.explanation.find("never completes"), std::string::npos);
        ++broken;
        return;
      }
    }
  });
  EXPECT_GT(broken, 0);
}

TEST(NcclOrder, CrossedSendsDeadlockInListOrderButNotInTheGlobalOrder) {
  const lower::Program p = crossed_sends();
  ASSERT_TRUE(lower::verify(p).empty()) << lower::verify(p).front();
  const ReplayResult naive = rendezvous_replay(p, naive_list_posts(p));
  EXPECT_FALSE(naive.complete);
  EXPECT_EQ(naive.stuck, (std::vector<std::pair<int, int>>{{0, 0}, {1, 0}}));
  const GlobalOrder order = derive_order(p);
  EXPECT_EQ(check_order(p, order), "");
  const ReplayResult global = rendezvous_replay(p, posts_of(order));
  EXPECT_TRUE(global.complete) << global.explanation;
  // Each rank receives one transfer and sends one, in the same global sequence: (0 → 1) then (1 → 0).
  ASSERT_EQ(order.steps.size(), 2u);
  EXPECT_EQ(order.steps[0].sends, (std::vector<std::pair<int, int>>{{0, 0}}));
  EXPECT_EQ(order.steps[1].sends, (std::vector<std::pair<int, int>>{{1, 0}}));
  EXPECT_EQ(order.issue[1][0].calls.front().kind, CallKind::recv);
}

TEST(NcclOrder, TransfersOfOneRingStepFuseIntoOneGroup) {
  lower::Program p = crossed_sends();
  for (auto& m : p.messages) m.group = 0, m.step = 0;
  const GlobalOrder order = derive_order(p);
  ASSERT_EQ(order.steps.size(), 1u);
  EXPECT_EQ(order.steps[0].sends.size(), 2u);
  EXPECT_EQ(order.steps[0].ranks, (std::vector<int>{0, 1}));
  ASSERT_EQ(order.issue[0].size(), 2u);  // the fused step, then attention
  EXPECT_EQ(order.issue[0][0].calls.size(), 2u);
  EXPECT_TRUE(order.issue[0][1].compute);
  EXPECT_TRUE(rendezvous_replay(p, posts_of(order)).complete);
}

TEST(NcclOrder, WaitsResolveToWhatTheyWaitFor) {
  lower::Program p = crossed_sends();
  lower::Instr wait;
  wait.kind = InstrKind::wait;
  wait.stream = lower::Stream::comm;
  wait.deps = {0, 1};
  for (auto& rank : p.ranks) {
    rank.instrs.push_back(wait);
    lower::Instr after = rank.instrs[2];
    after.deps = {3};
    rank.instrs.push_back(after);
    rank.first_backward = 5;
  }
  EXPECT_EQ(resolved_deps(p, 0, 4), (std::vector<int>{0, 1}));
  EXPECT_EQ(check_order(p, derive_order(p)), "");
}

}  // namespace
}  // namespace zb::cuda
