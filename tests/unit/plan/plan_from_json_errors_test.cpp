// plan::from_json refuses what it cannot run: each broken file gives exit code 2 and a message naming the
// file and the JSON path of what is wrong, in the words of the scenario loader.
#include <gtest/gtest.h>

#include "core/common/error.hpp"
#include "core/plan/plan_format.hpp"
#include "plan_test_support.hpp"

namespace zb {
namespace {

using nlohmann::json;

class BrokenPlanFile : public ::testing::Test {
 protected:
  // A ring plan on 4 GPUs (sends, recvs, both attention forms) and a Zeppelin plan on 2 x 4 GPUs (routed
  // sends, remap), as printed in full (every op its own object: the form one edits by hand). The compact
  // form's own errors are in plan_compact_form_test.cpp.
  void SetUp() override {
    Scenario s = test::preset_scenario("dgx-h200", 1, "llama-7b");
    s.cluster.gpus_per_node = 4;
    s.cluster.nics_per_node = 4;
    s.cluster.gpu_to_nic = {0, 1, 2, 3};
    ring_ = json::parse(
        plan::to_json(test::plan_of(s, test::system("ring-cp"), {4096, 300}), plan::Detail::full).dump());
    s.cluster.nodes = 2;
    zeppelin_ = json::parse(
        plan::to_json(test::plan_of(s, test::system("zeppelin"), {30000, 5000, 100, 7}), plan::Detail::full)
            .dump());
  }

  // The error from_json throws for `j` (a test fails when it throws none).
  static Error error_of(const json& j) {
    try {
      (void)plan::from_json(j, "broken.json");
    } catch (const Error& e) {
      return e;
    }
    ADD_FAILURE() << "from_json accepted the broken plan";
    return Error(ExitCode::ok, {}, "");
  }

  // Expects exit code 2 and a problem at `path` whose text contains `what`.
  static void expect_problem(const json& j, const std::string& path, const std::string& what) {
    const Error e = error_of(j);
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    for (const Problem& p : e.problems()) {
      if (p.where.json_path == path && p.str().find(what) != std::string::npos) {
        EXPECT_EQ(p.where.file, "broken.json");
        EXPECT_NE(p.str().find("broken.json: " + path), std::string::npos) << p.str();
        return;
      }
    }
    ADD_FAILURE() << "no problem at " << path << " mentioning '" << what << "' in:\n" << e.what();
  }

  // The index of the first op of `rank` with `kind` (and, for attention, the ring form or not).
  static std::size_t find(const json& j, int rank, const std::string& kind, bool zigzag = false) {
    const json& ops = j["ranks"][rank]["ops"];
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (ops[i]["kind"] == kind && (kind != "attention" || ops[i].contains("zigzag") == zigzag)) return i;
    }
    ADD_FAILURE() << "rank " << rank << " has no " << kind << " op";
    return 0;
  }

  // The first op of any rank with `kind` (and the ring form or not): (rank, index).
  static std::pair<std::size_t, std::size_t> find_any(const json& j, const std::string& kind, bool zigzag) {
    for (std::size_t r = 0; r < j["ranks"].size(); ++r) {
      const json& ops = j["ranks"][r]["ops"];
      for (std::size_t i = 0; i < ops.size(); ++i) {
        if (ops[i]["kind"] == kind && ops[i].contains("zigzag") == zigzag) return {r, i};
      }
    }
    ADD_FAILURE() << "no " << kind << " op";
    return {0, 0};
  }

  json ring_, zeppelin_;
};

TEST_F(BrokenPlanFile, PeerOutsideTheWorldNamesThePathAndTheWorldSize) {
  const std::size_t i = find(ring_, 3, "send");
  ring_["ranks"][3]["ops"][i]["peer"] = 7;
  expect_problem(ring_, "ranks[3].ops[" + std::to_string(i) + "].peer",
                 "rank 7 does not exist: world_size is 4");
}

// A sequence longer than the longest document a scenario may have (2^30 tokens, core/config/
// document_limit.hpp) is refused where it is written: verify counts its causal pairs in std::int64_t,
// which overflows past about 3e9 tokens.
TEST_F(BrokenPlanFile, SequenceLongerThanTheLongestDocumentIsRefused) {
  ring_["sequences"][1]["length"] = 4'000'000'000LL;
  expect_problem(ring_, "sequences[1].length", "must be between 0 and 1073741824");
}

TEST_F(BrokenPlanFile, UnknownOpKindSuggestsTheClosestKind) {
  ring_["ranks"][1]["ops"][0]["kind"] = "gemmm";
  expect_problem(ring_, "ranks[1].ops[0].kind", "did you mean \"gemm\"?");
}

TEST_F(BrokenPlanFile, MissingRequiredFieldIsNamed) {
  const std::size_t i = find(ring_, 0, "recv");
  ring_["ranks"][0]["ops"][i].erase("bytes");
  expect_problem(ring_, "ranks[0].ops[" + std::to_string(i) + "].bytes", "missing required key");
}

TEST_F(BrokenPlanFile, WrongTypeSaysWhatWasExpected) {
  const std::size_t i = find(ring_, 2, "send");
  ring_["ranks"][2]["ops"][i]["tag"] = "5";
  expect_problem(ring_, "ranks[2].ops[" + std::to_string(i) + "].tag",
                 "expected an integer, got a string (\"5\")");
}

TEST_F(BrokenPlanFile, KeyOfAnotherKindIsUnknownHere) {
  ring_["ranks"][0]["ops"][0]["peer"] = 1;  // op 0 is the qkv GEMM
  expect_problem(ring_, "ranks[0].ops[0].peer", "unknown key");
}

TEST_F(BrokenPlanFile, MisspeltKeySuggestsTheRightOne) {
  const std::size_t i = find(ring_, 1, "send");
  auto& op = ring_["ranks"][1]["ops"][i];
  op["peeer"] = op["peer"];
  op.erase("peer");
  const std::string path = "ranks[1].ops[" + std::to_string(i) + "]";
  expect_problem(ring_, path + ".peeer", "unknown key (did you mean \"peer\"?)");
  expect_problem(ring_, path + ".peer", "missing required key");
}

TEST_F(BrokenPlanFile, RoutedSendProxyOutsideTheWorldIsNamed) {
  for (std::size_t r = 0; r < zeppelin_["ranks"].size(); ++r) {
    auto& ops = zeppelin_["ranks"][r]["ops"];
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (ops[i]["kind"] == "send" && ops[i]["route"]["kind"] == "routed") {
        ops[i]["route"]["proxies"][0] = -1;
        expect_problem(zeppelin_,
                       "ranks[" + std::to_string(r) + "].ops[" + std::to_string(i) + "].route.proxies[0]",
                       "rank -1 does not exist");
        return;
      }
    }
  }
  FAIL() << "the Zeppelin plan has no routed send";
}

TEST_F(BrokenPlanFile, BlockOfASequenceThatDoesNotExist) {
  const auto [r, i] = find_any(zeppelin_, "attention", false);
  auto& op = zeppelin_["ranks"][r]["ops"][i];
  const std::string path = "ranks[" + std::to_string(r) + "].ops[" + std::to_string(i) + "]";
  if (op.contains("blocks")) {
    op["blocks"][0]["seq"] = 9;
    expect_problem(zeppelin_, path + ".blocks[0].seq", "sequence 9 does not exist: the plan has 4 sequences");
  } else {
    op["seq"] = 9;
    expect_problem(zeppelin_, path + ".seq", "sequence 9 does not exist: the plan has 4 sequences");
  }
}

TEST_F(BrokenPlanFile, RingFormWithoutItsGroupCannotBeExpanded) {
  const std::size_t i = find(ring_, 1, "attention", true);
  ring_["ranks"][1]["ops"][i].erase("group");
  expect_problem(ring_, "ranks[1].ops[" + std::to_string(i) + "].zigzag", "needs the op's group");
}

TEST_F(BrokenPlanFile, AttentionOpWithTwoBlockFormsIsRefused) {
  const std::size_t i = find(ring_, 1, "attention", true);
  ring_["ranks"][1]["ops"][i]["blocks"] = json::array();
  expect_problem(ring_, "ranks[1].ops[" + std::to_string(i) + "]", "mixes block forms");
}

TEST_F(BrokenPlanFile, DependencyOnAnOpThatDoesNotExist) {
  const std::size_t ops = ring_["ranks"][2]["ops"].size();
  ring_["ranks"][2]["ops"][1]["deps"] = {0, ops};
  expect_problem(ring_, "ranks[2].ops[1].deps[1]",
                 "op " + std::to_string(ops) + " does not exist: rank 2 has");
}

TEST_F(BrokenPlanFile, IdsArePositions) {
  ring_["ranks"][0]["ops"][2]["id"] = 5;
  expect_problem(ring_, "ranks[0].ops[2].id", "expected 2, got 5");
  ring_["ranks"][0]["ops"][2]["id"] = 2;
  ring_["ranks"][1]["rank"] = 0;
  expect_problem(ring_, "ranks[1].rank", "expected 1, got 0");
}

TEST_F(BrokenPlanFile, FeasibleMustAgreeWithOom) {
  ring_["feasible"] = false;
  expect_problem(ring_, "feasible", "is false but oom lists 0 reports");
}

TEST_F(BrokenPlanFile, HeadRangeMustBeAnIntervalOfHeads) {
  const std::size_t i = find(ring_, 0, "send");
  ring_["ranks"][0]["ops"][i]["heads"] = {4, 2};
  expect_problem(ring_, "ranks[0].ops[" + std::to_string(i) + "].heads", "0 <= begin < end");
}

TEST_F(BrokenPlanFile, UnknownCollectiveKind) {
  json op{{"id", ring_["ranks"][0]["ops"].size()},
          {"kind", "collective"},
          {"collective", "allgather"},
          {"ranks", {0, 1}},
          {"tag", 900},
          {"bytes", 8},
          {"deps", json::array()}};
  ring_["ranks"][0]["ops"].push_back(op);
  expect_problem(ring_, "ranks[0].ops[" + std::to_string(op["id"].get<int>()) + "].collective",
                 "did you mean \"all_gather\"?");
}

TEST_F(BrokenPlanFile, WorldSizeThatIsNotWholeNodes) {
  ring_["gpus_per_node"] = 3;
  expect_problem(ring_, "gpus_per_node", "world_size 4 is not a whole number of nodes of 3 GPUs");
}

// Found by the plan fuzzer (tests/fuzz/regressions/plan/layout-shorter-than-the-world.json): a layout or
// op list with fewer entries than world_size was accepted, and printing the plan read past its end.
TEST_F(BrokenPlanFile, PerRankArraysNeedOneEntryPerRank) {
  for (const char* key : {"attention_layout", "linear_layout", "ranks"}) {
    json j = ring_;
    j[key].erase(j[key].size() - 1);
    expect_problem(j, key, std::string(key) + " has 3 ");
    expect_problem(j, key, "but world_size is 4");
  }
}

TEST_F(BrokenPlanFile, NewerSchemaIsRefusedAlone) {
  ring_["schema_version"] = 4;
  ring_["something_new"] = true;
  const Error e = error_of(ring_);
  ASSERT_EQ(e.problems().size(), 1u) << e.what();
  EXPECT_EQ(e.problems()[0].where.json_path, "schema_version");
  EXPECT_NE(e.problems()[0].what.find("schema_version 4 is not supported: this build reads 1 to 3"),
            std::string::npos);
}

TEST_F(BrokenPlanFile, NotAnObjectAtAll) {
  const Error e = error_of(json::array());
  EXPECT_EQ(e.code(), ExitCode::bad_input);
  EXPECT_NE(std::string(e.what()).find("broken.json: expected an object, got an array"), std::string::npos)
      << e.what();
}

TEST_F(BrokenPlanFile, EveryProblemIsListedUpToALimit) {
  ring_["ranks"][0]["ops"][0]["kind"] = "x";
  ring_["ranks"][1]["ops"][0]["kind"] = "y";
  EXPECT_EQ(error_of(ring_).problems().size(), 2u) << "two broken ops, two problems";
  for (auto& r : ring_["ranks"]) {
    for (auto& op : r["ops"]) op["kind"] = "nonsense";
  }
  const Error e = error_of(ring_);
  EXPECT_LE(e.problems().size(), 25u);
  EXPECT_NE(std::string(e.what()).find("stopped reading after 20 problems"), std::string::npos);
}

TEST_F(BrokenPlanFile, MissingFileIsBadInput) {
  try {
    (void)plan::read_plan_file("/nonexistent/zeppelin/plan.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/zeppelin/plan.json: no such file"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace zb
