// The preflight refuses, before any batch is drawn, what run could not finish: a workload source that
// yields no lengths (named at its scenario key) and a run whose estimated memory exceeds the machine's.
// The memory figure is passed in, so these tests do not depend on the machine they run on.
#include "core/run/preflight.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/common/error.hpp"
#include "core/config/scenario_loader.hpp"

namespace zb {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

Scenario scenario_with(const std::string& workload, int nodes = 2,
                       const std::filesystem::path& file = "preflight.json") {
  return parse_scenario(R"({"name": "preflight", "cluster": {"preset": "dgx-h200", "nodes": )" +
                            std::to_string(nodes) + R"(}, "model": {"preset": "llama-7b"}, "workload": )" +
                            workload + R"(, "systems": ["zeppelin", "ring-cp"]})",
                        file);
}

// The single problem check_runnable throws; fails the test when it throws none.
Problem refusal(const Scenario& scenario, double memory_bytes) {
  try {
    check_runnable(scenario, memory_bytes);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    EXPECT_EQ(e.problems().size(), 1u) << e.what();
    return e.problems().front();
  }
  ADD_FAILURE() << "the run was not refused";
  return {};
}

TEST(Preflight, FixedLengthsGiveTheExactDocumentCount) {
  const RunSizeEstimate e = estimate_run_size(scenario_with(
      R"({"distribution": {"kind": "fixed", "value": 1024}, "tokens_per_iteration": 1048576, "iterations": 5})"));
  EXPECT_DOUBLE_EQ(e.documents_per_iteration, 1024);
  EXPECT_EQ(e.iterations, 5);
  EXPECT_EQ(e.ranks, 16);
  EXPECT_EQ(e.systems, 2);
}

TEST(Preflight, SplitCountsThePiecesOfLongDocuments) {
  const RunSizeEstimate e = estimate_run_size(scenario_with(
      R"({"distribution": {"kind": "fixed", "value": 10000}, "max_seq_len": 4096, "long_documents": "split", "tokens_per_iteration": 1000000})"));
  EXPECT_NEAR(e.documents_per_iteration, 300, 1);  // three pieces (4096, 4096, 1808) per 10,000 tokens
}

TEST(Preflight, TheQuickstartSizeFitsInAFewGiB) {
  const Scenario s =
      scenario_with(R"({"dataset": "wikipedia", "tokens_per_iteration": 1048576, "iterations": 3})");
  EXPECT_LT(estimate_run_size(s).total_bytes(), 0.5 * kGiB);
  EXPECT_NO_THROW(check_runnable(s, 4 * kGiB));
}

TEST(Preflight, ATrillionTokensIsRefusedWithTheFigure) {
  const Problem p =
      refusal(scenario_with(
                  R"({"dataset": "wikipedia", "max_seq_len": 8192, "tokens_per_iteration": 1000000000000})"),
              64 * kGiB);
  EXPECT_EQ(p.where.file, "preflight.json");
  EXPECT_EQ(p.where.json_path, "workload.tokens_per_iteration");
  EXPECT_NE(p.what.find("the run needs about"), std::string::npos) << p.what;
  EXPECT_NE(p.what.find("more than this machine's 64 GiB"), std::string::npos) << p.what;
}

// Ring CP over every GPU has P steps per rank: 1000 nodes (8000 ranks) is 64 M ring steps per layer, which
// planned for hours and grew past any memory; a degree keeps it small (issue 38, red-team finding b).
Scenario ring_scenario(int nodes, const std::string& system) {
  return parse_scenario(
      R"({"name": "rings", "cluster": {"preset": "dgx-h200", "nodes": )" + std::to_string(nodes) +
          R"(}, "model": {"preset": "llama-7b"}, "workload": {"dataset": "wikipedia"}, "systems": [)" +
          system + "]}",
      "rings.json");
}

TEST(Preflight, RingsOverEveryRankOfAThousandNodesAreRefusedNamingTheNodes) {
  const Problem p = refusal(ring_scenario(1000, R"("zeppelin", "ring-cp")"), 64 * kGiB);
  EXPECT_EQ(p.where.json_path, "cluster.nodes");
  EXPECT_NE(p.what.find("ring-cp with groups of 8000 ranks (6.4e+07 ring steps per layer)"),
            std::string::npos)
      << p.what;
  EXPECT_NE(p.hint.find("give ring-cp a smaller \"degree\" (rings inside a node: 8)"), std::string::npos)
      << p.hint;
  // The same cluster with rings of one node's GPUs fits.
  EXPECT_NO_THROW(check_runnable(ring_scenario(1000, R"({"name": "ring-cp", "degree": 8})"), 64 * kGiB));
}

TEST(Preflight, AWideGivenDegreeNamesThatSystemsDegree) {
  const Problem p =
      refusal(ring_scenario(1000, R"("zeppelin", {"name": "uniform-cp", "degree": 4000})"), 64 * kGiB);
  EXPECT_EQ(p.where.json_path, "systems[1].degree");
  EXPECT_NE(p.what.find("uniform-cp[degree=4000] with groups of 4000 ranks"), std::string::npos) << p.what;
}

// The estimate stays a floor of what ring-cp was measured to need (50, 100 and 200 nodes, 1M tokens of
// Wikipedia lengths: 1.38, 4.26 and 15.8 GB at peak), so it never refuses a run that fits.
TEST(Preflight, TheRingEstimateStaysBelowTheMeasuredPeaks) {
  const std::pair<int, double> measured[] = {{50, 1.38e9}, {100, 4.26e9}, {200, 15.8e9}};
  for (const auto& [nodes, peak] : measured) {
    Scenario s = ring_scenario(nodes, R"("ring-cp")");
    s.workload.tokens_per_iteration = 1048576;
    s.workload.iterations = 1;
    const RunSizeEstimate e = estimate_run_size(s);
    EXPECT_LT(e.total_bytes(), peak) << nodes << " nodes";
    EXPECT_GT(e.total_bytes(), peak / 4) << nodes << " nodes: the floor is too low to refuse anything";
  }
}

TEST(Preflight, ManyIterationsNameTheIterations) {
  Scenario s = scenario_with(R"({"dataset": "wikipedia", "tokens_per_iteration": 1048576})");
  s.workload.iterations = 1'000'000'000;  // what --iterations can ask for
  EXPECT_EQ(refusal(s, 64 * kGiB).where.json_path, "workload.iterations");
}

// run draws each iteration's batch when the iteration runs and drops it after: an iteration more costs what
// it leaves in the result, the same however many documents its batch holds.
TEST(Preflight, AnIterationMoreCostsTheSameForSmallAndLargeBatches) {
  const auto growth_per_iteration = [](const std::string& tokens_per_iteration) {
    const std::string workload =
        R"({"distribution": {"kind": "fixed", "value": 1024}, "tokens_per_iteration": )" +
        tokens_per_iteration + R"(, "iterations": )";
    return estimate_run_size(scenario_with(workload + "1001}")).total_bytes() -
           estimate_run_size(scenario_with(workload + "1}")).total_bytes();
  };
  const double small = growth_per_iteration("1048576");     // 1024 documents a batch
  const double large = growth_per_iteration("1073741824");  // 1,048,576 documents a batch
  EXPECT_GT(small, 0);
  EXPECT_DOUBLE_EQ(large, small);
}

// Before streaming, the thousand batches alone were counted as 16 GiB and the run was refused.
TEST(Preflight, AThousandIterationsOfAMillionDocumentsFitIn8GiB) {
  const Scenario s = scenario_with(
      R"({"distribution": {"kind": "fixed", "value": 1024}, "tokens_per_iteration": 1073741824, "iterations": 1000})");
  EXPECT_DOUBLE_EQ(estimate_run_size(s).documents_per_iteration, 1048576);
  EXPECT_NO_THROW(check_runnable(s, 8 * kGiB));
}

TEST(Preflight, ManyNodesNameTheNodes) {
  const Problem p = refusal(
      scenario_with(R"({"dataset": "wikipedia", "tokens_per_iteration": 1048576, "iterations": 1})", 100000),
      64 * kGiB);
  EXPECT_EQ(p.where.json_path, "cluster.nodes");
  EXPECT_NE(p.what.find("800000 ranks"), std::string::npos) << p.what;
}

TEST(Preflight, UnknownMachineMemoryDisablesOnlyTheMemoryCheck) {
  EXPECT_NO_THROW(check_runnable(
      scenario_with(
          R"({"distribution": {"kind": "fixed", "value": 1}, "tokens_per_iteration": 1099511627776})"),
      0));
}

TEST(Preflight, LengthsFileProblemsAreNamedAtTheScenarioKey) {
  const auto folder = std::filesystem::temp_directory_path() / "zb-preflight-lengths";
  std::filesystem::create_directories(folder);
  std::ofstream(folder / "bad.lengths") << "512\n-3\n";
  std::ofstream(folder / "word.lengths") << "512\nmany\n";
  std::ofstream(folder / "huge.lengths") << "512\n";
  std::filesystem::resize_file(folder / "huge.lengths",
                               (std::uintmax_t{256} << 20) + 1);  // sparse: no disk used
  for (const auto& [file, part] :
       {std::pair{"missing.lengths", "not found"}, std::pair{"bad.lengths", ":2: length -3 is not positive"},
        std::pair{"word.lengths", ":2: 'many' is not an integer"},
        std::pair{"huge.lengths", "over the limit of 256 MiB"}}) {
    const Scenario s =
        scenario_with(std::string(R"({"lengths_file": ")") + file + R"("})", 2, folder / "s.json");
    try {
      (void)estimate_run_size(s);
      ADD_FAILURE() << file << " was accepted";
    } catch (const Error& e) {
      ASSERT_EQ(e.problems().size(), 1u);
      EXPECT_EQ(e.problems()[0].where.file, (folder / "s.json").string());
      EXPECT_EQ(e.problems()[0].where.json_path, "workload.lengths_file");
      EXPECT_NE(e.problems()[0].what.find(part), std::string::npos) << e.what();
    }
  }
  std::filesystem::remove_all(folder);
}

}  // namespace
}  // namespace zb
