// The backward pass on real numbers: every strategy's Program, forward then backward, in one process;
// every rank's dQ, dK and dV rows (linear layout) must match the float64 reference element by element
// within the derived rounding bound, for every token of the batch.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/integration/reference_support.hpp"

namespace zb {
namespace {

// The backward costs about five forwards (the float32 backward, and the float64 check's row statistics,
// dQ and dK/dV passes), so these scenarios are smaller than the forward suite's.
constexpr double kSquaredLengthBudget = 7.0e5;
constexpr std::int64_t kMaxLength = 1024;

std::int64_t tokens(const std::vector<std::int64_t>& lengths) {
  std::int64_t total = 0;
  for (const auto l : lengths) total += l;
  return total;
}

class BackwardRandomScenarios : public ::testing::TestWithParam<int> {};

TEST_P(BackwardRandomScenarios, EveryStrategyVerifiesEveryGradient) {
  test::RandomCase c =
      test::random_case(5000 + static_cast<std::uint64_t>(GetParam()), kSquaredLengthBudget, kMaxLength);
  c.scenario.passes = Passes::fwd_bwd;
  // GQA on a third of the scenarios: dK/dV add over the query heads of a group.
  const reference::ReferenceOptions options = test::in_process_options(GetParam() % 3 == 0);
  for (const SystemSpec& system : test::reference_systems(c.scenario.cluster)) {
    SCOPED_TRACE(system.label + " on " + test::describe(c));
    try {
      const test::ReferenceRun run = test::run_reference(
          c.scenario, system, c.lengths, test::reference_options_for(system, c.scenario, options));
      if (!run.plan.feasible()) continue;
      EXPECT_TRUE(run.trace.backward);
      EXPECT_NE(run.trace.model_note.find("backward verified"), std::string::npos) << run.trace.model_note;
      // Every member of a tensor-parallel group (hydraulis's replicas) holds and checks its group's rows:
      // the group's first member stands for it in the count.
      std::vector<bool> counted(run.results.size(), true);
      for (const std::vector<int>& group : run.plan.tensor_parallel_groups) {
        for (std::size_t i = 1; i < group.size(); ++i) counted[static_cast<std::size_t>(group[i])] = false;
      }
      std::int64_t rows = 0;
      for (std::size_t rank = 0; rank < run.results.size(); ++rank) {
        const auto& r = run.results[rank];
        ASSERT_TRUE(r.gradients.ran);
        EXPECT_EQ(r.gradients.failure, "");
        for (const auto* check : {&r.gradients.dq, &r.gradients.dk, &r.gradients.dv})
          EXPECT_LE(check->worst_ratio, 1.0);
        EXPECT_EQ(r.gradients.dq.rows, r.gradients.dk.rows);
        if (counted[rank]) rows += r.gradients.dq.rows;
      }
      EXPECT_EQ(rows, tokens(c.lengths))
          << "every token's gradients are checked, on exactly one rank (of its tensor-parallel group)";
      RecordProperty(system.label, run.trace.model_note);
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Reference, BackwardRandomScenarios, ::testing::Range(0, 24));

TEST(BackwardNamedCases, RoutedAccumulatorsAreRelayedThroughProxies) {
  // Zeppelin's inter-node ring over two nodes of 8 GPUs routes its KV over every NIC; the backward's K/V
  // and dK/dV accumulators take the same routes, so proxies relay backward pieces too.
  Scenario s = test::small_cluster(2, 8, false);
  s.passes = Passes::fwd_bwd;
  const auto run = test::run_reference(s, test::system("zeppelin", {{"partitioning", "flat"}}), {2048},
                                       test::in_process_options());
  const auto relays =
      std::count_if(run.trace.events.begin(), run.trace.events.end(),
                    [](const TraceEvent& e) { return e.track == Track::nic && e.pass == Pass::bwd; });
  EXPECT_GT(relays, 0) << "no backward relay leg ran; the case no longer tests routed accumulators";
  EXPECT_NE(run.trace.model_note.find("backward verified"), std::string::npos) << run.trace.model_note;
  EXPECT_GT(run.trace.layer.backward, 0);
  for (const TraceEvent& e : run.trace.events) {
    if (e.pass == Pass::bwd) {
      EXPECT_GE(e.start, run.trace.layer.forward) << "a backward event before the layer barrier";
    }
  }
}

TEST(BackwardNamedCases, SameInputsGiveTheSameGradientBits) {
  Scenario s = test::small_cluster(1, 4, false, 7);
  s.passes = Passes::fwd_bwd;
  for (const char* system : {"ring-cp", "zeppelin"}) {
    SCOPED_TRACE(system);
    const auto first = test::run_reference(s, test::system(system), {700, 33, 5}, test::in_process_options());
    const auto second =
        test::run_reference(s, test::system(system), {700, 33, 5}, test::in_process_options());
    ASSERT_EQ(first.results.size(), second.results.size());
    for (std::size_t r = 0; r < first.results.size(); ++r)
      EXPECT_EQ(first.results[r].gradients.checksum, second.results[r].gradients.checksum) << "rank " << r;
  }
}

TEST(BackwardNamedCases, AForwardOnlyProgramRunsNoBackward) {
  const Scenario s = test::small_cluster(1, 2, false);
  const auto run = test::run_reference(s, test::system("ring-cp"), {300}, test::in_process_options());
  EXPECT_FALSE(run.trace.backward);
  EXPECT_EQ(run.trace.layer.backward, 0);
  EXPECT_EQ(run.trace.model_note.find("backward"), std::string::npos) << run.trace.model_note;
  for (const auto& r : run.results) EXPECT_FALSE(r.gradients.ran);
  for (const TraceEvent& e : run.trace.events) EXPECT_EQ(e.pass, Pass::fwd);
}

}  // namespace
}  // namespace zb

namespace zb {
namespace {

// Zeppelin's engine puts local calls between the steps of a ring that waits for K/V (issue 31), and the
// backward runs them at the same place in the ring's backward. Such a plan still verifies forward and
// backward on the reference numerics: the first of a few small two-node batches (one long document
// on a ring over both nodes without routing, many short ones) whose plan interleaves local work.
TEST(BackwardNamedCases, ZeppelinsInterleavedLocalWorkVerifiesForwardAndBackward) {
  Scenario s = test::small_cluster(2, 4, false);
  s.passes = Passes::fwd_bwd;
  const CostModel cost(s.cluster, s.model);
  const SystemSpec zeppelin = test::system("zeppelin", {{"routing", false}});
  std::vector<std::int64_t> chosen;
  for (const std::int64_t longest : {2048, 4096, 6144}) {
    for (const int shorts : {16, 32, 64}) {
      std::vector<std::int64_t> lengths{longest};
      lengths.insert(lengths.end(), static_cast<std::size_t>(shorts), 48);
      const plan::Plan p = make_strategy(zeppelin, s, cost)->make_plan(test::batch_of(lengths));
      if (chosen.empty() && p.feasible() && test::local_calls_between_ring_steps(p) > 0) chosen = lengths;
    }
  }
  ASSERT_FALSE(chosen.empty()) << "no batch made the engine interleave: the case tests nothing";
  const auto run = test::run_reference(s, zeppelin, chosen, test::in_process_options());
  EXPECT_NE(run.trace.model_note.find("backward verified"), std::string::npos) << run.trace.model_note;
  // The backward mirrors the forward: a local call that ran between two steps of a ring in the forward
  // runs between two backward steps of that ring.
  const auto ring = [&](int group) {
    return run.plan.groups[static_cast<std::size_t>(group)].ranks.size() > 1;
  };
  int mirrored = 0;
  for (int r = 0; r < run.plan.world_size; ++r) {
    std::vector<const TraceEvent*> bwd;
    for (const TraceEvent& e : run.trace.events) {
      if (e.rank == r && e.pass == Pass::bwd && e.category == EventCategory::attention) bwd.push_back(&e);
    }
    std::sort(bwd.begin(), bwd.end(), [](auto* a, auto* b) { return a->start < b->start; });
    for (std::size_t i = 1; i + 1 < bwd.size(); ++i) {
      if (!ring(bwd[i]->group) && ring(bwd[i - 1]->group) && bwd[i + 1]->group == bwd[i - 1]->group)
        ++mirrored;
    }
  }
  EXPECT_GT(mirrored, 0) << "no local call ran between two backward steps of a ring";
}

}  // namespace
}  // namespace zb

namespace zb {
namespace {

// Zeppelin's `heads: auto` puts some documents in head-parallel groups beside its rings and local work in
// the same micro-batch: Ulysses all-to-alls inside a node (u × 1), or USP rings of head slices across
// nodes (u × r). For each form, the first of a few small two-node batches whose plan keeps it verifies
// forward and backward on the reference numerics.
TEST(BackwardNamedCases, ZeppelinsHeadParallelGroupsVerifyForwardAndBackward) {
  Scenario s = test::small_cluster(2, 4, false);
  s.passes = Passes::fwd_bwd;
  const CostModel cost(s.cluster, s.model);
  const SystemSpec zeppelin = test::system("zeppelin", {{"heads", "auto"}});
  // Whether a plan splits heads over whole documents (Ulysses), or on a ring's steps (USP).
  const auto splits = [](const plan::Plan& p, bool on_a_ring) {
    return std::any_of(p.ranks.begin(), p.ranks.end(), [&](const plan::RankOps& rank) {
      return std::any_of(rank.ops.begin(), rank.ops.end(), [&](const plan::Op& op) {
        return op.kind == plan::OpKind::attention && !op.heads.all() && (op.zigzag_kv_rank >= 0) == on_a_ring;
      });
    });
  };
  for (const bool usp : {false, true}) {
    SCOPED_TRACE(usp ? "USP across nodes" : "Ulysses inside a node");
    std::vector<std::int64_t> chosen;
    for (const std::int64_t longest : {1024, 2048, 4096, 6144, 8192, 12288, 16384}) {
      for (const int shorts : {0, 8, 32}) {
        std::vector<std::int64_t> lengths{longest, longest / 2};
        lengths.insert(lengths.end(), static_cast<std::size_t>(shorts), 40);
        const plan::Plan p = make_strategy(zeppelin, s, cost)->make_plan(test::batch_of(lengths));
        if (chosen.empty() && p.feasible() && splits(p, usp)) chosen = lengths;
      }
    }
    ASSERT_FALSE(chosen.empty()) << "no batch kept such a group: the case tests nothing";
    const auto run = test::run_reference(
        s, zeppelin, chosen, test::reference_options_for(zeppelin, s, test::in_process_options()));
    EXPECT_TRUE(splits(run.plan, usp));
    EXPECT_NE(run.trace.model_note.find("backward verified"), std::string::npos) << run.trace.model_note;
  }
}

}  // namespace
}  // namespace zb
