// Every strategy's plans, run on real numbers: random small scenarios (up to 16 ranks, lengths 1 to
// 4096, odd lengths, lengths below 2P, single tokens, shared NICs), one process, verification must pass.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "tests/integration/reference_support.hpp"

namespace zb {
namespace {

using test::RandomCase;

// Sum of squared lengths is what the kernel and the float64 check cost; the budget keeps the whole
// suite within its time while most cases still hold a sequence of a few thousand tokens.
constexpr double kSquaredLengthBudget = 6.0e6;

class RandomScenarios : public ::testing::TestWithParam<int> {};

TEST_P(RandomScenarios, EveryStrategyVerifies) {
  const RandomCase c = test::random_case(1000 + static_cast<std::uint64_t>(GetParam()), kSquaredLengthBudget);
  const reference::ReferenceOptions options =
      test::in_process_options(GetParam() % 3 == 0);  // GQA on a third
  for (const SystemSpec& system : test::reference_systems(c.scenario.cluster)) {
    SCOPED_TRACE(system.label + " on " + test::describe(c));
    try {
      const test::ReferenceRun run = test::run_reference(
          c.scenario, system, c.lengths, test::reference_options_for(system, c.scenario, options));
      if (!run.plan.feasible()) continue;
      EXPECT_NE(run.trace.model_note.find("verified"), std::string::npos) << run.trace.model_note;
      double worst = 0;
      for (const auto& r : run.results) worst = std::max(worst, r.verification.max_rel_error);
      EXPECT_LE(worst, options.tolerance);
      RecordProperty(system.label, run.trace.model_note);
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Reference, RandomScenarios, ::testing::Range(0, 24));

TEST(ReferenceNamedCases, RoutedTransfersAreRelayedThroughProxies) {
  // Two nodes of 8 GPUs with one long sequence: Zeppelin's inter-node ring routes its KV over every
  // NIC, so proxies that list no op for it must relay pieces. The flat partition puts it on that ring
  // (on this small model its own planner would rather run it whole on one GPU: the ring costs more).
  const Scenario s = test::small_cluster(2, 8, false);
  reference::ReferenceOptions options;
  options.transport = reference::TransportChoice::in_process;
  const auto run =
      test::run_reference(s, test::system("zeppelin", {{"partitioning", "flat"}}), {4096}, options);
  std::size_t routed = 0;
  for (const auto& r : run.plan.ranks)
    for (const auto& op : r.ops)
      routed += op.kind == plan::OpKind::send && op.route.kind == plan::RouteKind::routed;
  ASSERT_GT(routed, 0u) << "the plan has no routed send; the case no longer tests relaying";
  const auto relays = std::count_if(run.trace.events.begin(), run.trace.events.end(),
                                    [](const TraceEvent& e) { return e.track == Track::nic; });
  EXPECT_GT(relays, 0);
  EXPECT_NE(run.trace.model_note.find("verified"), std::string::npos);
}

TEST(ReferenceNamedCases, SingleTokensAndSequencesShorterThanTwoP) {
  const Scenario s = test::small_cluster(2, 4, true);
  reference::ReferenceOptions options;
  options.transport = reference::TransportChoice::in_process;
  for (const SystemSpec& system : test::reference_systems(s.cluster)) {
    SCOPED_TRACE(system.label);
    EXPECT_NO_THROW((void)test::run_reference(s, system, {1, 1, 1, 3, 15, 2, 7, 16, 17},
                                              test::reference_options_for(system, s, options)));
  }
}

TEST(ReferenceNamedCases, SameInputsGiveTheSameOutputBits) {
  const Scenario s = test::small_cluster(1, 4, false, 7);
  reference::ReferenceOptions options;
  options.transport = reference::TransportChoice::in_process;
  const auto first = test::run_reference(s, test::system("ring-cp"), {1000, 33, 5}, options);
  const auto second = test::run_reference(s, test::system("ring-cp"), {1000, 33, 5}, options);
  ASSERT_EQ(first.results.size(), second.results.size());
  for (std::size_t r = 0; r < first.results.size(); ++r)
    EXPECT_EQ(first.results[r].verification.checksum, second.results[r].verification.checksum)
        << "rank " << r;
}

}  // namespace
}  // namespace zb
