// The executor conformance suite, reference half: on random clusters and batches (forward only, and
// forward and backward), for every registered strategy, the reference executor runs every rank's compute
// instructions in exactly the order the simulator does (the Program's list order, pass by pass), and both
// record one send and one recv per message they move.
// New executors join this suite. The simulator's half is tests/unit/lower/conformance_test.cpp.
#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "core/exec/executor.hpp"
#include "core/run/execute.hpp"
#include "tests/integration/reference_support.hpp"

namespace zb {
namespace {

// Per rank, the (pass, plan op) of its compute events in the order they started.
std::map<int, std::vector<std::pair<Pass, int>>> compute_order(const Trace& t) {
  std::vector<const TraceEvent*> events;
  for (const auto& e : t.events) {
    if (e.track == Track::compute) events.push_back(&e);
  }
  std::stable_sort(events.begin(), events.end(), [](const TraceEvent* a, const TraceEvent* b) {
    return std::tie(a->rank, a->pass, a->start) < std::tie(b->rank, b->pass, b->start);
  });
  std::map<int, std::vector<std::pair<Pass, int>>> order;
  for (const auto* e : events) order[e->rank].emplace_back(e->pass, e->op);
  return order;
}

// Per (src, dst), how many send events the trace has.
std::map<std::pair<int, int>, int> sends(const Trace& t) {
  std::map<std::pair<int, int>, int> out;
  for (const auto& e : t.events) {
    if (e.category == EventCategory::send) ++out[{e.rank, e.peer}];
  }
  return out;
}

TEST(ExecutorConformance, ReferenceRunsEveryRanksComputeInTheSimulatorsOrder) {
  reference::ReferenceOptions options;
  int compared = 0;
  for (std::uint64_t seed = 0; seed < 6; ++seed) {
    Rng rng(seed, 41);
    const int gpus[] = {1, 2, 4};
    Scenario s =
        test::small_cluster(1 + static_cast<int>(rng.below(2)), gpus[rng.below(3)], rng.below(2) == 0, seed);
    if (seed % 2 == 1) s.passes = Passes::fwd_bwd;  // the backward pass follows the same order rules
    std::vector<std::int64_t> lengths;
    for (int i = 0, n = 1 + static_cast<int>(rng.below(6)); i < n; ++i)
      lengths.push_back(1 + static_cast<std::int64_t>(rng.below(600)));
    const CostModel cost(s.cluster, s.model);
    for (const SystemSpec& system : test::reference_systems(s.cluster)) {
      SCOPED_TRACE("seed " + std::to_string(seed) + ", " + system.label);
      const plan::Plan p = make_strategy(system, s, cost)->make_plan(test::batch_of(lengths));
      if (!p.feasible()) continue;
      reference::ReferenceExecutor executor(test::reference_options_for(system, s, options));
      const Trace measured = test::run_plan(executor, p, s, cost);
      const Trace simulated = execute(*make_executor(Backend::sim), p, s, cost);
      EXPECT_EQ(compute_order(measured), compute_order(simulated));
      EXPECT_EQ(sends(measured), sends(simulated));
      ++compared;
    }
  }
  EXPECT_GT(compared, 12);
}

}  // namespace
}  // namespace zb
