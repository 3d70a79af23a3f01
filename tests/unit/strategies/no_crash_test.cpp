// No crash on any accepted input (issue 38, item 5). Every registered strategy, at its defaults and with each
// option moved off its default, on scenarios the loader accepts, drawn from hardware preset x model preset x
// GPU memory {just above the model states, the preset's, ten thousand times it} x nodes {1, 2, 7, 64} x
// tensor parallelism {1, the node's GPUs where the model allows} x batches {short documents, one document
// longer than a node holds, mixed} x {fwd, fwd+bwd}: each plan either passes plan::verify or is an OOM naming
// a rank of the cluster and a positive shortfall. Nothing else: no exception, no signal.
//
// The product is 2880 cases, each planned by every variant (about 45). On 64 nodes one case takes up to
// minutes and gigabytes (a ring over 512 GPUs is 512^2 steps, per micro-batch), so `make test` runs a seeded
// sample of the cases on at most 7 nodes (about 30 s on two cores) and the ctest labelled "long"
// (ZEPPELIN_LONG_TESTS=ON) a larger sample of the whole product. ZB_NO_CRASH_CASES=N (or "all"),
// ZB_NO_CRASH_SEED and ZB_NO_CRASH_NODES (the most nodes) move the sample; each case run is printed, so a
// crash names the case that was being planned, and ZB_NO_CRASH_CASE=<seed> with ZB_NO_CRASH_SYSTEM=<part of
// a label> reruns it alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <string>

#include "core/common/error.hpp"
#include "core/plan/verify.hpp"
#include "core/strategies/strategy.hpp"
#include "core/strategies/tensor_parallel.hpp"
#include "no_crash_cases.hpp"
#include "support.hpp"

namespace zb {
namespace {

std::size_t env_count(const char* name, std::size_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  if (std::string(text) == "all") return static_cast<std::size_t>(-1);
  return static_cast<std::size_t>(std::strtoull(text, nullptr, 10));
}

struct Tally {
  int feasible = 0;
  int oom = 0;
  int refused_cases = 0;    // the loader refuses the case (no TP width the model allows)
  int refused_systems = 0;  // the strategy refuses an option for this model, as `run` would (exit 2)
  std::map<std::string, double> seconds;  // by strategy: where the time goes, to size the sample
};

// The plan is one the run pipeline accepts: verified with the run's options (run_scenario.cpp), or an OOM
// whose every report names a rank of the real cluster and what it is short of, with no ops planned.
void expect_plan_or_oom(const plan::Plan& p, const Scenario& s, const CostModel& cost,
                        const std::string& where, Tally& tally) {
  const int world = s.cluster.world_size();
  EXPECT_EQ(p.world_size, world) << where;
  if (p.feasible()) {
    ++tally.feasible;
    const auto capacity = [&](int w) { return tensor_parallel_token_capacity(cost, w); };
    const auto problems = plan::verify(p, {.token_capacity = capacity(s.parallelism.tensor),
                                           .heads = s.model.heads,
                                           .capacity_of_tp_width = capacity});
    EXPECT_TRUE(problems.empty()) << where << ": " << problems.front();
    return;
  }
  ++tally.oom;
  for (const plan::OomReport& o : p.oom) {
    EXPECT_GE(o.rank, 0) << where << ": " << o.str();
    EXPECT_LT(o.rank, world) << where << ": " << o.str();
    EXPECT_GE(o.token_capacity, 0) << where << ": " << o.str();
    EXPECT_GT(o.tokens_needed, o.token_capacity) << where << ": an OOM with no shortfall: " << o.str();
  }
  for (const plan::RankOps& r : p.ranks)
    EXPECT_TRUE(r.ops.empty()) << where << ": rank " << r.rank << " has ops";
}

// Plans the case's batch with every system of its scenario whose label contains `only_system` (all when
// null). A strategy may refuse an option at construction, as the run does before planning it (ulysses'
// degree must divide the model's heads, which the loader's hook cannot see); planning may not throw.
void plan_case(const test::NoCrashCase& c, const char* only_system, bool verbose, Tally& tally) {
  const std::optional<Scenario> s = test::no_crash_scenario(c);
  if (!s) {
    ++tally.refused_cases;
    std::cout << "refused by the loader: " << c.str() << std::endl;
    return;
  }
  const CostModel cost(s->cluster, s->model, s->hardware_profile.profile);
  const auto lengths = test::no_crash_batch(c, *s, cost);
  std::cout << c.str() << " (TP " << s->parallelism.tensor << ", "
            << tensor_parallel_token_capacity(cost, s->parallelism.tensor) << " tokens per GPU, "
            << lengths.size() << " documents, the longest "
            << *std::max_element(lengths.begin(), lengths.end()) << ")"
            << std::endl;  // flushed: a crash names its case
  const auto start = std::chrono::steady_clock::now();
  for (const SystemSpec& sys : s->systems) {
    if (only_system != nullptr && sys.label.find(only_system) == std::string::npos) continue;
    const std::string where = c.str() + " system " + sys.label;
    if (verbose) std::cout << "  " << sys.label << std::endl;
    const auto t0 = std::chrono::steady_clock::now();
    std::unique_ptr<Strategy> strategy;
    try {
      strategy = make_strategy(sys, *s, cost);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::bad_input) << where << ": " << e.what();
      ++tally.refused_systems;
      if (verbose) std::cout << "  refused: " << e.what() << std::endl;
      continue;
    }
    try {
      expect_plan_or_oom(strategy->make_plan(test::batch_of(lengths)), *s, cost, where, tally);
    } catch (const std::exception& e) {
      ADD_FAILURE() << where << ": threw " << e.what();
    }
    tally.seconds[sys.name] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  std::cout << "  " << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() << " s"
            << std::endl;
}

TEST(EveryStrategyOnAcceptedInput, PlansOrReportsAnOomNamingARankAndItsShortfall) {
  std::vector<test::NoCrashCase> cases =
      test::sampled_no_crash_cases(env_count("ZB_NO_CRASH_CASES", 48), env_count("ZB_NO_CRASH_SEED", 38),
                                   static_cast<int>(env_count("ZB_NO_CRASH_NODES", 7)));
  if (const std::size_t only = env_count("ZB_NO_CRASH_CASE", 0); only > 0)
    cases = {test::all_no_crash_cases().at(only - 1)};
  const char* only_system = std::getenv("ZB_NO_CRASH_SYSTEM");
  const bool verbose = std::getenv("ZB_NO_CRASH_VERBOSE") != nullptr;  // each system before it plans
  Tally tally;
  for (const test::NoCrashCase& c : cases) plan_case(c, only_system, verbose, tally);
  for (const auto& [name, seconds] : tally.seconds) std::cout << name << ": " << seconds << " s\n";
  std::cout << tally.feasible << " plans verified, " << tally.oom << " OOMs; " << tally.refused_cases
            << " cases refused by the loader, " << tally.refused_systems << " systems by their strategy"
            << std::endl;
  // A sample that only ever fits, or never does, says nothing about the other half of the property.
  EXPECT_GT(tally.feasible, 0);
  EXPECT_GT(tally.oom, 0);
}

}  // namespace
}  // namespace zb
