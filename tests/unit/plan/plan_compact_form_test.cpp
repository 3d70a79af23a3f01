// The compact form's own shorthands (runs, layouts written "groups" or "attention", blocks as arrays) are
// read as strictly as the ops and shards they stand for: each broken one is exit code 2 naming the file and
// the JSON path, a repetition of a run by its op and repetition (`ops[j]@m`); a summary, and a file that
// would expand past the reader's limit, are refused before anything runs; and the shorthands belong to
// schema 3, so an older file that uses them is refused too.
#include <gtest/gtest.h>

#include "core/common/error.hpp"
#include "core/plan/plan_format.hpp"
#include "plan_test_support.hpp"

namespace zb {
namespace {

using nlohmann::json;

class CompactPlanFile : public ::testing::Test {
 protected:
  // Ring CP on 8 GPUs (rings of 8: every rank folds its steps into a run) and llama3-cp on 4 (explicit
  // block lists), as printed compact.
  void SetUp() override {
    Scenario s = test::preset_scenario("dgx-h200", 1, "llama-7b");
    ring_ = json::parse(plan::to_json_text(test::plan_of(s, test::system("ring-cp"), {9000, 4000, 300})));
    s.cluster.gpus_per_node = 4;
    s.cluster.nics_per_node = 4;
    s.cluster.gpu_to_nic = {0, 1, 2, 3};
    llama3_ = json::parse(plan::to_json_text(test::plan_of(s, test::system("llama3-cp"), {9000, 4000, 300})));
  }

  static Error error_of(const json& j, plan::ReadLimits limits = {}) {
    try {
      (void)plan::from_json(j, "compact.json", limits);
    } catch (const Error& e) {
      return e;
    }
    ADD_FAILURE() << "from_json accepted the broken plan";
    return Error(ExitCode::ok, {}, "");
  }

  static void expect_problem(const json& j, const std::string& path, const std::string& what,
                             plan::ReadLimits limits = {}) {
    const Error e = error_of(j, limits);
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    for (const Problem& p : e.problems()) {
      if (p.where.json_path == path && p.str().find(what) != std::string::npos) {
        EXPECT_NE(p.str().find("compact.json: " + path), std::string::npos) << p.str();
        return;
      }
    }
    ADD_FAILURE() << "no problem at " << path << " mentioning '" << what << "' in:\n" << e.what();
  }

  // Rank 4's first run: its index in the rank's entries. Its ring steps 2..7 take the KV of ranks 2, 1,
  // 0, 7, 6, 5: the owner wraps.
  std::size_t first_run() const {
    const json& ops = ring_["ranks"][4]["ops"];
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].contains("run")) return i;
    }
    ADD_FAILURE() << "rank 4 has no run";
    return 0;
  }

  json ring_, llama3_;
};

TEST_F(CompactPlanFile, TheFixtureUsesEveryShorthand) {
  EXPECT_EQ(ring_["detail"], "compact");
  EXPECT_EQ(ring_["attention_layout"][0]["shards"], "groups");
  EXPECT_EQ(ring_["linear_layout"][0]["shards"], "attention");
  EXPECT_TRUE(ring_["ranks"][4]["ops"][first_run()].contains("vary"));
  bool arrays = false;
  for (const json& op : llama3_["ranks"][0]["ops"])
    arrays = arrays || (op.contains("blocks") && op["blocks"][0].is_array());
  EXPECT_TRUE(arrays) << "llama3-cp's attention lists its blocks";
}

// The ring's KV owner steps back through the group's ranks and wraps: {"by": -1, "within": [0, 8]}.
std::size_t op_with_kv_owner(const json& run) {
  for (std::size_t j = 0; j < run["ops"].size(); ++j) {
    if (run["vary"][j].contains("kv_owner")) return j;
  }
  ADD_FAILURE() << "no kv_owner varies in the run: " << run.dump();
  return 0;
}

TEST_F(CompactPlanFile, AValueOfALaterRepetitionIsNamedByOpAndRepetition) {
  const std::size_t i = first_run();
  json& run = ring_["ranks"][4]["ops"][i];
  const std::size_t j = op_with_kv_owner(run);
  EXPECT_EQ(run["vary"][j]["kv_owner"]["within"], json({0, 8})) << run["vary"][j].dump();
  json listed = json::array();
  for (int m = 1; m < run["run"].get<int>(); ++m) listed.push_back(m == 2 ? 99 : 0);
  run["vary"][j]["kv_owner"] = listed;
  expect_problem(ring_, "ranks[4].ops[" + std::to_string(i) + "].ops[" + std::to_string(j) + "]@2.kv_owner",
                 "rank 99 does not exist: world_size is 8");
}

TEST_F(CompactPlanFile, AWrapRangeMustHoldTheFirstValue) {
  const std::size_t i = first_run();
  json& run = ring_["ranks"][4]["ops"][i];
  const std::size_t j = op_with_kv_owner(run);
  const std::string path = "ranks[4].ops[" + std::to_string(i) + "].vary[" + std::to_string(j) + "].kv_owner";
  run["vary"][j]["kv_owner"]["within"] = {3, 3};
  expect_problem(ring_, path + ".within", "expected [low, high] with low < high");
  run["vary"][j]["kv_owner"]["within"] = {4, 8};
  run["ops"][j]["kv_owner"] = 2;
  expect_problem(ring_, path + ".within", "the op's kv_owner 2 is outside the range it wraps in");
}

TEST_F(CompactPlanFile, RunsOfEqualValuesMustCoverEveryLaterRepetition) {
  const std::size_t i = first_run();
  json& run = ring_["ranks"][4]["ops"][i];
  const int later = run["run"].get<int>() - 1;
  const std::string path = "ranks[4].ops[" + std::to_string(i) + "].vary[0].calls";
  run["vary"][0]["calls"] = {{"runs", {{1, later - 1}}}};
  expect_problem(ring_, path + ".runs",
                 "the counts add up to " + std::to_string(later - 1) + ", not " + std::to_string(later));
  run["vary"][0]["calls"] = {{"runs", {{1, 0}, {1, later}}}};
  expect_problem(ring_, path + ".runs[0]", "expected [value, count] with 1 <= count");
  run["vary"][0]["calls"] = {{"runs", {{1, 1}, {3, later - 1}}}};
  const plan::Plan p = plan::from_json(ring_, "compact.json");
  const auto first = static_cast<std::size_t>(run["ops"][0]["id"].get<int>());
  const std::size_t period = run["ops"].size();
  EXPECT_EQ(p.ranks[4].ops[first + period].calls, 1);
  EXPECT_EQ(p.ranks[4].ops[first + 2 * period].calls, 3);
}

TEST_F(CompactPlanFile, AStepThatLeavesTheOpsIsADependencyOnNothing) {
  const std::size_t i = first_run();
  json& run = ring_["ranks"][4]["ops"][i];
  run["vary"][0]["deps"] = {{"by", 1000}};
  const std::string path = "ranks[4].ops[" + std::to_string(i) + "].ops[0]@";
  const Error e = error_of(ring_);
  EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("does not exist: rank 4 has"), std::string::npos) << e.what();
}

TEST_F(CompactPlanFile, VaryingAFieldTheOpLacksIsRefused) {
  const std::size_t i = first_run();
  json& run = ring_["ranks"][4]["ops"][i];
  std::size_t gemm_like = run["ops"].size();
  for (std::size_t j = 0; j < run["ops"].size(); ++j) {
    if (!run["ops"][j].contains("route") && run["ops"][j]["kind"] != "attention") gemm_like = j;  // a recv
  }
  ASSERT_LT(gemm_like, run["ops"].size());
  run["vary"][gemm_like]["m"] = {{"by", 1}};
  expect_problem(ring_, "ranks[4].ops[" + std::to_string(i) + "].vary[" + std::to_string(gemm_like) + "].m",
                 "the op has no m to vary");
}

TEST_F(CompactPlanFile, ASeriesOfTheWrongLengthSaysHowManyValues) {
  const std::size_t i = first_run();
  json& run = ring_["ranks"][4]["ops"][i];
  const auto repeats = run["run"].get<int>();
  run["vary"][0]["calls"] = json::array({1});
  expect_problem(
      ring_, "ranks[4].ops[" + std::to_string(i) + "].vary[0].calls",
      "an array of the values of repetitions 1.." + std::to_string(repeats - 1) + ", got an array of 1");
}

TEST_F(CompactPlanFile, RunCountAndVaryEntriesAreChecked) {
  const std::size_t i = first_run();
  const std::string path = "ranks[4].ops[" + std::to_string(i) + "]";
  json j = ring_;
  j["ranks"][4]["ops"][i]["run"] = 1;
  expect_problem(j, path + ".run", "must be between 2 and");
  j = ring_;
  j["ranks"][4]["ops"][i]["vary"].erase(0);
  expect_problem(j, path + ".vary", "entries for");
  j = ring_;
  j["ranks"][4]["ops"][i]["vary"][0]["stepp"] = {{"by", 1}};
  expect_problem(j, path + ".vary[0].stepp", "did you mean \"step\"?");
}

TEST_F(CompactPlanFile, ARunThatWouldExpandPastTheLimitIsRefused) {
  const std::size_t i = first_run();
  ring_["ranks"][4]["ops"][i]["run"] = 1 << 20;
  ring_["ranks"][4]["ops"][i].erase("vary");
  expect_problem(ring_, "ranks[4].ops", "the most this build reads", {.max_ops = 100000});
}

TEST_F(CompactPlanFile, UnknownLayoutWordAndAttentionInTheAttentionLayout) {
  json j = ring_;
  j["attention_layout"][2]["shards"] = "attention";
  expect_problem(j, "attention_layout[2].shards", "unknown layout \"attention\"");
  j = ring_;
  j["linear_layout"][3]["shards"] = "group";
  expect_problem(j, "linear_layout[3].shards", "unknown layout \"group\"");
}

TEST_F(CompactPlanFile, BlockArraysAreCheckedElementByElement) {
  for (std::size_t i = 0; i < llama3_["ranks"][0]["ops"].size(); ++i) {
    json& op = llama3_["ranks"][0]["ops"][i];
    if (!op.contains("blocks") || !op["blocks"][0].is_array()) continue;
    const std::string path = "ranks[0].ops[" + std::to_string(i) + "].blocks[0]";
    json j = llama3_;
    j["ranks"][0]["ops"][i]["blocks"][0] = {0, 0, 10, 0};
    expect_problem(j, path, "(5, 6 or 8 elements), got an array of 4");
    j = llama3_;
    j["ranks"][0]["ops"][i]["blocks"][0] = {7, 0, 10, 0, 10};
    expect_problem(j, path + "[0]", "sequence 7 does not exist: the plan has 3 sequences");
    j = llama3_;
    j["ranks"][0]["ops"][i]["blocks"][0] = {0, 0, 10, 0, 10, "sliding"};
    expect_problem(j, path + "[5]", "expected the mask");
    j = llama3_;
    j["ranks"][0]["ops"][i]["blocks"][0] = {0, 0, 10, 0, 10, "causal", 4, 2};
    expect_problem(j, path + "[6]", "0 <= begin < end");
    return;
  }
  FAIL() << "llama3-cp's rank 0 lists no blocks";
}

TEST_F(CompactPlanFile, ASummaryIsRefusedBeforeItsRanksAreRead) {
  Scenario s = test::preset_scenario("dgx-h200", 1, "llama-7b");
  const json summary = json::parse(
      plan::to_json_text(test::plan_of(s, test::system("ring-cp"), {9000, 300}), plan::Detail::summary));
  const Error e = error_of(summary);
  ASSERT_EQ(e.problems().size(), 1u) << e.what();
  EXPECT_EQ(e.code(), ExitCode::bad_input);
  EXPECT_EQ(e.problems()[0].where.json_path, "detail");
  EXPECT_NE(std::string(e.what()).find("cannot be run"), std::string::npos) << e.what();
}

// Reported once, at the first shorthand: a compact file relabelled schema 2 is one mistake, not one per rank.
TEST_F(CompactPlanFile, OlderSchemasCannotUseTheShorthands) {
  json j = ring_;
  j["schema_version"] = 2;
  j.erase("detail");
  Error e = error_of(j);
  EXPECT_EQ(e.code(), ExitCode::bad_input);
  ASSERT_EQ(e.problems().size(), 1u) << e.what();
  EXPECT_NE(std::string(e.what()).find("attention_layout[0].shards: a layout written as a string is a "
                                       "schema-3 form, but the file says schema_version 2"),
            std::string::npos)
      << e.what();
  // With the layouts listed, the first shorthand left is rank 0's first run.
  Scenario s = test::preset_scenario("dgx-h200", 1, "llama-7b");
  const json full = json::parse(
      plan::to_json_text(test::plan_of(s, test::system("ring-cp"), {9000, 4000, 300}), plan::Detail::full));
  j["attention_layout"] = full["attention_layout"];
  j["linear_layout"] = full["linear_layout"];
  e = error_of(j);
  ASSERT_EQ(e.problems().size(), 1u) << e.what();
  EXPECT_EQ(e.problems()[0].what.find("a run of ops is a schema-3 form"), 0u) << e.what();
  EXPECT_EQ(e.problems()[0].where.json_path.rfind("ranks[0].ops[", 0), 0u) << e.what();
}

}  // namespace
}  // namespace zb
