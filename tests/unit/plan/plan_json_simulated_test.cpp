// A plan read back from its printed JSON simulates exactly as the plan it was printed from: every event of
// the sim backend's trace (rank, name, start, end, bytes) is the same, for every strategy on random
// clusters, from the compact form `run --plan` reads by default and from the full one.
#include <gtest/gtest.h>

#include "core/exec/executor.hpp"
#include "core/plan/plan_format.hpp"
#include "core/run/execute.hpp"
#include "plan_test_support.hpp"

namespace zb {
namespace {

Trace simulated(const Scenario& s, const plan::Plan& p) {
  const CostModel cost(s.cluster, s.model);
  auto executor = make_executor(Backend::sim);
  return execute(*executor, p, s, cost);
}

void expect_same_trace(const Trace& a, const Trace& b, const std::string& where) {
  ASSERT_EQ(a.events.size(), b.events.size()) << where;
  for (std::size_t i = 0; i < a.events.size(); ++i) {
    const TraceEvent& x = a.events[i];
    const TraceEvent& y = b.events[i];
    ASSERT_TRUE(x.rank == y.rank && x.name == y.name && x.start == y.start && x.end == y.end &&
                x.bytes == y.bytes && x.flops == y.flops)
        << where << ": event " << i << " (" << x.name << " on rank " << x.rank << ") differs";
  }
}

TEST(PlanJsonSimulated, ARoundTrippedPlanSimulatesEventForEvent) {
  int simulated_plans = 0;
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    test::RandomScenario c = test::random_scenario(seed);
    c.scenario.passes = Passes::fwd_bwd;
    for (const SystemSpec& system : test::strategies_to_print()) {
      const plan::Plan p = test::plan_of(c.scenario, system, c.lengths);
      if (!p.feasible()) continue;
      const Trace original = simulated(c.scenario, p);
      for (const plan::Detail detail : {plan::Detail::compact, plan::Detail::full}) {
        const plan::Plan back =
            plan::from_json(nlohmann::json::parse(plan::to_json_text(p, detail)), "round-trip.json");
        expect_same_trace(
            original, simulated(c.scenario, back),
            "seed " + std::to_string(seed) + " " + system.label + " " + plan::to_string(detail));
      }
      ++simulated_plans;
    }
  }
  EXPECT_GT(simulated_plans, 12);
}

}  // namespace
}  // namespace zb
