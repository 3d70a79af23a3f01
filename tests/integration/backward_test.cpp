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
      const test::ReferenceRun run = test::run_reference(c.scenario, system, c.lengths, options);
      if (!run.plan.feasible()) continue;
      EXPECT_TRUE(run.trace.backward);
      EXPECT_NE(run.trace.model_note.find("backward verified"), std::string::npos) << run.trace.model_note;
      std::int64_t rows = 0;
      for (const auto& r : run.results) {
        ASSERT_TRUE(r.gradients.ran);
        EXPECT_EQ(r.gradients.failure, "");
        for (const auto* check : {&r.gradients.dq, &r.gradients.dk, &r.gradients.dv})
          EXPECT_LE(check->worst_ratio, 1.0);
        EXPECT_EQ(r.gradients.dq.rows, r.gradients.dk.rows);
        rows += r.gradients.dq.rows;
      }
      EXPECT_EQ(rows, tokens(c.lengths)) << "every token's gradients are checked, on exactly one rank";
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
  const auto run = test::run_reference(s, test::system("zeppelin", {{"baseline_shapes", false}}), {2048},
                                       test::in_process_options());
  const auto relays =
      std::count_if(run.trace.events.begin(), run.trace.events.end(),
                    [](const TraceEvent& e) { return e.stream == Stream::nic && e.pass == Pass::bwd; });
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
