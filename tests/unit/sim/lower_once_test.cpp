// One lowering per planned layout (issue 36): a strategy's prediction lowers its plan to a Program and the
// plan keeps it (plan::Plan::lowered), so a run executes that Program instead of lowering the plan again.
// Only a plan that has none (read from a file, built by hand, predicted under a planner error) is lowered
// to run, once. The Program stands on its own: what executors need of the plan travels in it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/config/presets.hpp"
#include "core/lower/lower.hpp"
#include "core/strategies/strategy.hpp"
#include "tests/unit/sim/sim_test_support.hpp"

namespace zb {
namespace {

// Two nodes of dgx-h200, llama-7b, both passes: long documents ring across the nodes, short ones stay local.
Scenario two_nodes() {
  Scenario s;
  s.name = "lower-once";
  s.cluster = find_cluster_preset("dgx-h200")->spec;
  s.cluster.nodes = 2;
  s.model = find_model_preset("llama-7b")->spec;
  s.passes = Passes::fwd_bwd;
  return s;
}

Batch batch() {
  Batch b;
  b.lengths = {65536, 16384, 4096, 4096, 2048, 1024, 1024, 512, 300, 17};
  return b;
}

SystemSpec system(const std::string& name) {
  SystemSpec sys;
  sys.name = sys.label = name;
  return sys;
}

TEST(LowerOnce, ARunExecutesTheProgramItsPredictionLowered) {
  const Scenario s = two_nodes();
  const CostModel cost(s.cluster, s.model);
  // Zeppelin lowers every layout it weighs; each baseline here lowers its one plan (under TP twice: the
  // grid plan and the expanded one). None lowers again to run.
  for (const std::string name : {"ring-cp", "uniform-cp", "llama3-cp", "ulysses", "zeppelin"}) {
    const long before = lower::lowerings();
    const plan::Plan p = make_strategy(system(name), s, cost)->make_plan(batch());
    const long planned = lower::lowerings() - before;
    ASSERT_TRUE(p.feasible()) << name;
    ASSERT_NE(p.lowered, nullptr) << name << ": a feasible plan keeps the Program its prediction lowered";
    EXPECT_GE(planned, 1) << name;
    const Trace t = execute(*make_executor(Backend::sim), p, s, cost);
    EXPECT_GT(t.iteration_seconds, 0) << name;
    EXPECT_EQ(lower::lowerings() - before, planned) << name << ": the run lowered the plan again";
  }
}

TEST(LowerOnce, APlanWithoutItsProgramIsLoweredOnceToRun) {
  const Scenario s = two_nodes();
  const CostModel cost(s.cluster, s.model);
  plan::Plan p = make_strategy(system("ring-cp"), s, cost)->make_plan(batch());
  const Trace kept = execute(*make_executor(Backend::sim), p, s, cost);
  p.lowered.reset();  // as a plan read back from its JSON has none
  const long before = lower::lowerings();
  const Trace lowered_now = execute(*make_executor(Backend::sim), p, s, cost);
  EXPECT_EQ(lower::lowerings() - before, 1);
  // The same Program either way: the same simulated layer to the bit.
  EXPECT_EQ(lowered_now.layer.forward, kept.layer.forward);
  EXPECT_EQ(lowered_now.layer.backward, kept.layer.backward);
  EXPECT_EQ(lowered_now.events.size(), kept.events.size());
}

TEST(LowerOnce, APlannerErrorKeepsNoProgram) {
  // The strategy then plans with erroneous compute times, which executors must not charge.
  Scenario s = two_nodes();
  s.planner_error = 0.2;
  const CostModel cost(s.cluster, s.model);
  const CostModel planner_cost = planner_cost_model(s, cost);
  const plan::Plan p = make_strategy(system("ring-cp"), s, planner_cost)->make_plan(batch());
  ASSERT_TRUE(p.feasible());
  EXPECT_EQ(p.lowered, nullptr);
}

TEST(LowerOnce, TheProgramCarriesWhatExecutorsReadOfThePlan) {
  const Scenario s = two_nodes();
  const CostModel cost(s.cluster, s.model);
  for (const std::string name : {"ring-cp", "zeppelin", "ulysses"}) {
    const plan::Plan p = make_strategy(system(name), s, cost)->make_plan(batch());
    ASSERT_NE(p.lowered, nullptr) << name;
    const lower::Program& program = *p.lowered;
    EXPECT_EQ(program.system, p.system) << name;
    ASSERT_EQ(program.sequences.size(), p.sequences.size()) << name;
    for (std::size_t i = 0; i < p.sequences.size(); ++i)
      EXPECT_EQ(program.sequences[i].length, p.sequences[i].length) << name;
    ASSERT_EQ(program.groups.size(), p.groups.size()) << name;
    for (std::size_t g = 0; g < p.groups.size(); ++g) {
      EXPECT_EQ(program.groups[g].ranks, p.groups[g].ranks) << name;
      EXPECT_EQ(program.groups[g].level, p.groups[g].level) << name;
    }
    for (const plan::RankLayout& l : p.linear_layout) {
      const auto& shards = program.linear_layout.at(static_cast<std::size_t>(l.rank));
      ASSERT_EQ(shards.size(), l.shards.size()) << name;
      for (std::size_t i = 0; i < shards.size(); ++i) EXPECT_EQ(shards[i].size(), l.shards[i].size()) << name;
    }
    // Every attention instruction's blocks, forward and backward, are its plan op's.
    for (const lower::RankProgram& rank : program.ranks) {
      for (std::size_t id = 0; id < rank.instrs.size(); ++id) {
        const lower::Instr& in = rank.instrs[id];
        if (in.kind != lower::InstrKind::attention) continue;
        const plan::Op& op =
            p.ranks[static_cast<std::size_t>(rank.rank)].ops[static_cast<std::size_t>(in.plan_op)];
        const std::vector<layout::AttentionBlock> want = plan::expand_blocks(p, rank.rank, op);
        const std::vector<layout::AttentionBlock> got = lower::attention_blocks(program, rank.rank, in);
        ASSERT_EQ(got.size(), want.size())
            << name << " " << lower::describe(program, rank.rank, static_cast<int>(id));
        for (std::size_t b = 0; b < got.size(); ++b) {
          EXPECT_EQ(got[b].seq, want[b].seq);
          EXPECT_EQ(got[b].q0, want[b].q0);
          EXPECT_EQ(got[b].q1, want[b].q1);
          EXPECT_EQ(got[b].k0, want[b].k0);
          EXPECT_EQ(got[b].k1, want[b].k1);
          EXPECT_EQ(got[b].mask, want[b].mask);
          EXPECT_EQ(got[b].heads, want[b].heads);
        }
        EXPECT_EQ(in.heads, op.heads) << name;
      }
    }
  }
}

// The prediction lowers without rows (lower::LowerOptions::rows): the simulator, which times bytes, runs that
// Program as it is; an executor that moves real rows (the reference backend, the cuda one) is given the plan
// lowered again, with every message's slices.
TEST(LowerOnce, AnExecutorThatMovesRowsGetsTheProgramLoweredWithThem) {
  const Scenario s = two_nodes();
  const CostModel cost(s.cluster, s.model);
  EXPECT_FALSE(make_executor(Backend::sim)->reads_rows());
  EXPECT_TRUE(make_executor(Backend::reference)->reads_rows());
  for (const std::string name : {"ring-cp", "zeppelin"}) {
    const plan::Plan p = make_strategy(system(name), s, cost)->make_plan(batch());
    ASSERT_NE(p.lowered, nullptr) << name;
    EXPECT_FALSE(p.lowered->rows) << name << ": the prediction lowered the rows too";
    const auto listed_slices = [](const lower::Program& program) {
      std::size_t slices = 0;
      for (const lower::Message& m : program.messages) slices += m.slices.size();
      return slices;
    };
    EXPECT_EQ(listed_slices(*p.lowered), 0U) << name;

    long before = lower::lowerings();
    const auto timed = program_for_run(p, cost, s.passes, /*rows=*/false);
    EXPECT_EQ(timed.get(), p.lowered.get()) << name << ": the simulator's run lowered the plan again";
    EXPECT_EQ(lower::lowerings() - before, 0) << name;

    before = lower::lowerings();
    const auto moved = program_for_run(p, cost, s.passes, /*rows=*/true);
    EXPECT_EQ(lower::lowerings() - before, 1) << name;
    EXPECT_TRUE(moved->rows) << name;
    EXPECT_GT(listed_slices(*moved), 0U) << name << ": the rows were not listed";
    // The same Program otherwise: as many instructions and messages, each moving the same bytes.
    ASSERT_EQ(moved->messages.size(), p.lowered->messages.size()) << name;
    for (std::size_t m = 0; m < moved->messages.size(); ++m)
      EXPECT_EQ(moved->messages[m].bytes, p.lowered->messages[m].bytes) << name << ", message " << m;
    EXPECT_EQ(moved->instruction_count(), p.lowered->instruction_count()) << name;
  }
}

}  // namespace
}  // namespace zb
