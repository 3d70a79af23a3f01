#include "core/run/run_scenario.hpp"

#include <algorithm>
#include <new>
#include <optional>

#include "core/common/error.hpp"
#include "core/common/out_of_memory.hpp"
#include "core/config/backend_names.hpp"
#include "core/cost/cost_model.hpp"
#include "core/exec/backend_registry.hpp"
#include "core/exec/executor.hpp"
#include "core/plan/verify.hpp"
#include "core/run/iteration.hpp"
#include "core/strategies/moe_layer.hpp"
#include "core/strategies/strategy.hpp"
#include "core/strategies/tensor_parallel.hpp"
#include "core/workload/workload.hpp"

namespace zb {
namespace {

// Where a command-line flag's problem is: the flag stands in for the JSON path.
Location flag(const char* name) {
  Location where;
  where.json_path = name;
  return where;
}

}  // namespace

std::vector<ScenarioOverride> apply_overrides(Scenario& scenario, std::optional<std::string> backend,
                                              std::optional<int> iterations,
                                              std::optional<std::uint64_t> seed,
                                              std::optional<std::string> out_dir) {
  std::vector<ScenarioOverride> applied;
  if (backend) {
    const std::vector<std::string>& names = backend_names();
    if (std::find(names.begin(), names.end(), *backend) == names.end()) {
      std::string known;
      for (const std::string& name : names) known += (known.empty() ? "" : ", ") + name;
      throw_input_error(flag("--backend"), "\"" + *backend + "\" is not a registered backend",
                        "use one of " + known + " (zeppelin-bench list backends)");
    }
    scenario.backend = *backend;
    applied.push_back({"--backend", "/backend", *backend});
  }
  if (iterations) {
    if (*iterations < 1)
      throw_input_error(flag("--iterations"), "must be at least 1, got " + std::to_string(*iterations));
    scenario.workload.iterations = *iterations;
    applied.push_back({"--iterations", "/workload/iterations", *iterations});
  }
  if (seed) {
    scenario.seed = *seed;
    applied.push_back({"--seed", "/seed", *seed});
  }
  if (out_dir) {
    if (out_dir->empty()) throw_input_error(flag("--out"), "must name a directory");
    scenario.output.dir = *out_dir;
    applied.push_back({"--out", "/output/dir", *out_dir});
  }
  return applied;
}

RunResult run_scenario(const Scenario& scenario, const RunOptions& options) {
  RunResult result;
  result.scenario = scenario;
  const CostModel cost(scenario);
  // The strategies plan with what their fits would tell them; the executors charge `cost`.
  const CostModel planner_cost = planner_cost_model(scenario, cost);
  const Workload workload(scenario);
  // An MoE model's router (docs/MOE.md, "The router load model"), seeded by the scenario as the workload is.
  std::optional<MoeRouter> router;
  if (scenario.model.has_experts()) router.emplace(scenario.model.moe, scenario.model.layers, scenario.seed);
  if (scenario.parallelism.tensor > 1 && scenario.backend == "reference") {
    // The reference kernels compute every head of a rank's rows; a TP member holds a slice of the heads.
    throw_input_error(
        Location{scenario.source_file.string(), "parallelism.tensor"},
        "tensor parallelism runs on the sim backend only; the reference backend computes every head",
        "TP splits heads, which leaves each head's numerics unchanged: verify the same strategies "
        "without \"parallelism\" on the reference backend");
  }
  const auto executor = make_executor(scenario.backend);
  // Before any planning: a backend that cannot run here ends the run now, before any output claims it ran.
  executor->prepare(scenario.cluster);
  result.runtime = executor->runtime_facts();
  const auto simulator = simulator_for(scenario.backend, options.simulate_measured);
  result.backend = executor->backend();
  const int iterations = scenario.workload.iterations;
  result.long_documents = long_document_record(scenario, cost);

  const int systems = static_cast<int>(scenario.systems.size());
  for (int si = 0; si < systems; ++si) {
    const SystemSpec& system = scenario.systems[static_cast<std::size_t>(si)];
    SystemResult sr;
    sr.system = system;
    const auto strategy = make_strategy(system, scenario, planner_cost);
    for (int i = 0; i < iterations; ++i) {
      try {
        if (options.on_progress) options.on_progress({system.label, si, systems, i, iterations});
        // Drawn now and dropped after this iteration: a batch depends on the seed and i only, so every system
        // gets the same one without any being stored, and memory does not grow with iterations × documents.
        const Batch batch = workload.batch(i);
        if (si == 0) {  // the scenario loader requires at least one system
          result.workload.add(batch);
          result.long_documents.add(i, batch.lengths);
        }
        plan::Plan p = timed_plan(*strategy, batch);
        // The router runs with the batch, after planning: its choices resize the plan's MoE layer.
        if (router && p.feasible() && p.info.contains("moe_layer"))
          route_moe_layer(p, cost, realised_routing(p, *router, i));
        IterationResult it = iteration_of(p, i);
        if (options.verify_plans && p.world_size <= options.verify_max_ranks) {
          it.verification = plan::verify(
              p, {.token_capacity = tensor_parallel_token_capacity(cost, scenario.parallelism.tensor),
                  .heads = scenario.model.heads,
                  .capacity_of_tp_width = [&](int w) { return tensor_parallel_token_capacity(cost, w); }});
          if (!it.verification.empty()) {
            throw_runtime_error(Location{scenario.source_file.string(), "systems", 0, 0, -1},
                                "the plan of " + system.label + " for iteration " + std::to_string(i) +
                                    " is invalid: " + it.verification.front(),
                                "this is a bug in the strategy; please report it with the scenario");
          }
        }
        execute_iteration(*executor, scenario, cost, std::move(p), std::move(it), sr, simulator.get());
      } catch (const std::bad_alloc&) {
        // The unwinding has freed this iteration's plan and program, so the message can be built.
        throw out_of_memory_error("planning and running " + system.label + " (iteration " +
                                  std::to_string(i + 1) + " of " + std::to_string(iterations) + ")");
      }
    }
    result.systems.push_back(std::move(sr));
  }
  return result;
}

}  // namespace zb
