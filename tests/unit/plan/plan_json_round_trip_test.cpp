// The plan JSON is an interface both ways: what `plan --format json` prints, plan::from_json reads back
// to a plan that prints the same bytes, at both runnable details (compact and full), for every strategy,
// for the IR's newer fields, and for files of the older schemas.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/plan/plan_format.hpp"
#include "plan_test_support.hpp"

namespace zb {
namespace {

using ojson = nlohmann::ordered_json;

std::string printed(const plan::Plan& p, plan::Detail detail = plan::Detail::compact) {
  return plan::to_json_text(p, detail);
}

plan::Plan read_back(const std::string& text) {
  return plan::from_json(nlohmann::json::parse(text), "round-trip.json");
}

// Compact and full are two spellings of one plan: each reads back to a plan that prints both the same
// bytes again (so every field survives: full prints them all), and the streamed text is the DOM.
TEST(PlanJsonRoundTrip, EveryStrategyOnRandomScenariosPrintsTheSameBytesAfterReading) {
  int plans = 0, feasible = 0;
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    const test::RandomScenario c = test::random_scenario(seed);
    for (const SystemSpec& system : test::strategies_to_print()) {
      const plan::Plan p = test::plan_of(c.scenario, system, c.lengths);
      const std::string where = "seed " + std::to_string(seed) + " system " + system.label;
      const std::string compact = printed(p, plan::Detail::compact);
      const std::string full = printed(p, plan::Detail::full);
      const plan::Plan from_compact = read_back(compact);
      ASSERT_EQ(printed(from_compact, plan::Detail::compact), compact) << where;
      ASSERT_EQ(printed(from_compact, plan::Detail::full), full) << where;
      ASSERT_EQ(printed(read_back(full), plan::Detail::full), full) << where;
      ASSERT_EQ(nlohmann::ordered_json::parse(compact), plan::to_json(p, plan::Detail::compact)) << where;
      ++plans;
      feasible += p.feasible() ? 1 : 0;
    }
  }
  EXPECT_GT(feasible, plans / 2) << "most plans must have ops, or the round trip proves little";
}

TEST(PlanJsonRoundTrip, InfeasiblePlanKeepsItsOomReportsAndNoOps) {
  Scenario s = test::preset_scenario("dgx-h200", 1, "llama-7b");
  const plan::Plan p = test::plan_of(s, test::system("ring-cp"), {1 << 26});
  ASSERT_FALSE(p.feasible());
  const plan::Plan q = read_back(printed(p));
  EXPECT_EQ(q.oom.size(), p.oom.size());
  EXPECT_FALSE(q.feasible());
  EXPECT_EQ(printed(q), printed(p));
}

// Head ranges, collectives and tensor-parallel groups come from no strategy yet; set them by hand on a
// ring plan (which has both attention forms' fields, sends and recvs).
plan::Plan ring_plan_with_new_fields() {
  Scenario s = test::preset_scenario("dgx-h200", 1, "llama-7b");
  s.cluster.gpus_per_node = 4;
  s.cluster.nics_per_node = 4;
  s.cluster.gpu_to_nic = {0, 1, 2, 3};
  plan::Plan p = test::plan_of(s, test::system("ring-cp"), {4096, 300, 7});
  p.tensor_parallel_groups = {{0, 1}, {2, 3}};
  for (auto& r : p.ranks) {
    for (auto& op : r.ops) {
      if (op.kind == plan::OpKind::attention && op.zigzag_kv_rank >= 0) op.heads = {0, 4};
      if (op.kind == plan::OpKind::send || op.kind == plan::OpKind::recv) op.heads = {4, -1};
    }
    test::add(p, r.rank, test::collective(plan::CollectiveKind::reduce_scatter, {0, 1, 2, 3}, 1000, {0}));
  }
  // One explicit single-block op with heads on its block (the flat form), one with op-level heads.
  auto& ops = p.ranks[0].ops;
  plan::Op flat = test::attention({test::block(0, 1, 0, 1, plan::Mask::causal, {2, 6})});
  flat.id = static_cast<int>(ops.size());
  ops.push_back(flat);
  plan::Op sliced = test::attention({test::block(0, 1, 0, 1, plan::Mask::causal)});
  sliced.zigzag_kv_rank = -1;
  sliced.heads = {1, 3};
  sliced.id = static_cast<int>(ops.size());
  ops.push_back(sliced);
  return p;
}

TEST(PlanJsonRoundTrip, HeadRangesCollectivesAndTensorParallelGroupsSurvive) {
  const plan::Plan p = ring_plan_with_new_fields();
  const std::string text = printed(p);
  const plan::Plan q = read_back(text);
  EXPECT_EQ(printed(q), text);
  EXPECT_EQ(printed(read_back(printed(p, plan::Detail::full)), plan::Detail::full),
            printed(p, plan::Detail::full));
  EXPECT_EQ(q.tensor_parallel_groups, (std::vector<std::vector<int>>{{0, 1}, {2, 3}}));
  const plan::Op& last_on_1 = q.ranks[1].ops.back();
  EXPECT_EQ(last_on_1.kind, plan::OpKind::collective);
  EXPECT_EQ(last_on_1.collective, plan::CollectiveKind::reduce_scatter);
  EXPECT_EQ(last_on_1.collective_ranks, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(last_on_1.tag, 1000);
  EXPECT_EQ(last_on_1.bytes, 1024);
  const auto& ops0 = q.ranks[0].ops;
  EXPECT_EQ(ops0[ops0.size() - 2].blocks.at(0).heads, (plan::HeadRange{2, 6}));
  EXPECT_TRUE(ops0[ops0.size() - 2].heads.all());
  EXPECT_EQ(ops0.back().heads, (plan::HeadRange{1, 3}));
  EXPECT_TRUE(ops0.back().blocks.at(0).heads.all());
}

TEST(PlanJsonRoundTrip, PlainPlansPrintSchemaThreeWithoutHeadsAndWithQTokens) {
  Scenario s = test::preset_scenario("dgx-h200", 2, "llama-7b");
  const ojson j = plan::to_json(test::plan_of(s, test::system("zeppelin"), {30000, 5000, 100, 100, 7}),
                                plan::Detail::full);
  EXPECT_EQ(j["schema_version"], 3);
  EXPECT_EQ(j["detail"], "full");
  EXPECT_EQ(j["tensor_parallel_groups"], ojson::array());
  EXPECT_EQ(j.dump().find("\"heads\""), std::string::npos) << "heads are printed only when not all heads";
  bool attention = false;
  for (const auto& r : j["ranks"]) {
    for (const auto& op : r["ops"]) {
      if (op["kind"] != "attention") continue;
      attention = true;
      EXPECT_TRUE(op.contains("q_tokens"));
      EXPECT_TRUE(op.contains("pairs") && op.contains("calls"));  // schema-1 keys, same names
    }
  }
  EXPECT_TRUE(attention);
}

// A schema-2 file is the full form without `detail`: it reads back to the plan it was printed from.
TEST(PlanJsonRoundTrip, SchemaTwoFileReadsBackToThePlanItWasPrintedFrom) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const test::RandomScenario c = test::random_scenario(seed);
    for (const SystemSpec& system : test::strategies_to_print()) {
      const plan::Plan p = test::plan_of(c.scenario, system, c.lengths);
      nlohmann::json old = nlohmann::json::parse(printed(p, plan::Detail::full));
      old["schema_version"] = 2;
      old.erase("detail");
      ASSERT_EQ(printed(plan::from_json(old, "schema2.json")), printed(p))
          << "seed " << seed << " " << system.label;
    }
  }
}

// A schema-1 file lacks q_tokens and tensor_parallel_groups; the reader derives q_tokens by the rule
// PlanBuilder uses, so reading it gives back the plan it was printed from.
TEST(PlanJsonRoundTrip, SchemaOneFileReadsBackToThePlanItWasPrintedFrom) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const test::RandomScenario c = test::random_scenario(seed);
    for (const SystemSpec& system : test::strategies_to_print()) {
      const plan::Plan p = test::plan_of(c.scenario, system, c.lengths);
      // Schema 1 predates tensor parallelism: a plan with TP groups (hydraulis's replicas) has no
      // schema-1 form.
      if (!p.tensor_parallel_groups.empty()) continue;
      nlohmann::json old = nlohmann::json::parse(printed(p, plan::Detail::full));
      old["schema_version"] = 1;
      old.erase("detail");
      old.erase("tensor_parallel_groups");
      for (auto& r : old["ranks"]) {
        for (auto& op : r["ops"]) op.erase("q_tokens");
      }
      ASSERT_EQ(printed(plan::from_json(old, "schema1.json")), printed(p))
          << "seed " << seed << " " << system.label;
    }
  }
}

TEST(PlanJsonRoundTrip, CommentsAreAllowedInAPlanFile) {
  Scenario s = test::preset_scenario("dgx-h200", 1, "llama-7b");
  const plan::Plan p = test::plan_of(s, test::system("ring-cp"), {512, 64});
  const auto file = std::filesystem::path(testing::TempDir()) / "commented-plan.json";
  {
    std::ofstream out(file);
    out << "// edited by hand: what if ...\n" << printed(p) << "\n";
  }
  EXPECT_EQ(printed(plan::read_plan_file(file)), printed(p));
}

}  // namespace
}  // namespace zb
