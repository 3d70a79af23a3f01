#pragma once
// Builders shared by the reference-executor integration tests and the MPI comparison driver: small
// clusters from presets, planning one batch with one system, and running the reference backend.
#include <string>
#include <vector>

#include "core/cost/cost_model.hpp"
#include "core/exec/reference/reference_executor.hpp"
#include "core/lower/lower.hpp"
#include "core/strategies/strategy.hpp"
#include "tests/unit/strategies/support.hpp"

namespace zb::test {

// `nodes` × `gpus_per_node` DGX H200-like GPUs with the small model; with shared_nics two GPUs share a
// NIC (A800-like), so routing has fewer rails than GPUs.
inline Scenario small_cluster(int nodes, int gpus_per_node, bool shared_nics, std::uint64_t seed = 1) {
  Scenario s = preset_scenario("dgx-h200", nodes, "llama-7b");
  s.model = small_model();
  s.seed = seed;
  s.passes = Passes::fwd;
  ClusterSpec& c = s.cluster;
  c.gpus_per_node = gpus_per_node;
  shared_nics = shared_nics && gpus_per_node >= 2;
  c.nics_per_node = shared_nics ? gpus_per_node / 2 : gpus_per_node;
  c.gpu_to_nic.clear();
  for (int i = 0; i < gpus_per_node; ++i) c.gpu_to_nic.push_back(shared_nics ? i / 2 : i);
  return s;
}

// Lowers `plan` as the scenario runs it (forward only unless its passes are fwd_bwd) and runs it on the
// reference executor: what zb::execute does, without linking the simulator into the tests.
inline Trace run_plan(reference::ReferenceExecutor& executor, const plan::Plan& plan, const Scenario& scenario,
                      const CostModel& cost) {
  const lower::Program program = lower::lower(plan, cost, {.backward = scenario.passes == Passes::fwd_bwd});
  return executor.run(program, RunContext{scenario, cost});
}

struct ReferenceRun {
  plan::Plan plan;
  Trace trace;
  std::vector<reference::RankResult> results;
};

// Plans `lengths` with `system` on `scenario` and runs the plan on the reference backend. Throws what
// the executor throws (zb::Error) when verification or a transfer fails. Under MPI one executor must
// serve every run of the process (it owns the transport), hence the first overload.
inline ReferenceRun run_reference(reference::ReferenceExecutor& executor, const Scenario& scenario,
                                  const SystemSpec& system, const std::vector<std::int64_t>& lengths) {
  const CostModel cost(scenario.cluster, scenario.model);
  ReferenceRun run;
  run.plan = make_strategy(system, scenario, cost)->make_plan(batch_of(lengths));
  run.trace = run_plan(executor, run.plan, scenario, cost);
  run.results = executor.last_results();
  return run;
}

inline ReferenceRun run_reference(const Scenario& scenario, const SystemSpec& system,
                                  const std::vector<std::int64_t>& lengths, const reference::ReferenceOptions& options) {
  reference::ReferenceExecutor executor(options);
  return run_reference(executor, scenario, system, lengths);
}

// The systems every integration test runs: every registered strategy and each value of its options,
// fixed degrees 2 where 2 divides the world.
inline std::vector<SystemSpec> reference_systems(int world_size) { return registered_variants(world_size, {2}); }

}  // namespace zb::test
