#include "core/run/run_plan.hpp"

#include <algorithm>
#include <memory>
#include <numeric>
#include <optional>

#include "core/common/error.hpp"
#include "core/cost/cost_model.hpp"
#include "core/exec/backend_registry.hpp"
#include "core/exec/executor.hpp"
#include "core/lower/lower.hpp"
#include "core/lower/verify_program.hpp"
#include "core/plan/verify.hpp"
#include "core/run/iteration.hpp"
#include "core/run/plan_sizes.hpp"
#include "core/strategies/tensor_parallel.hpp"
#include "core/workload/workload.hpp"

namespace zb {
namespace {

constexpr std::size_t verify_problems_listed = 5;

std::string documents_text(const std::vector<std::int64_t>& lengths) {
  const std::int64_t tokens = std::accumulate(lengths.begin(), lengths.end(), std::int64_t{0});
  return std::to_string(lengths.size()) + " documents (" + std::to_string(tokens) + " tokens)";
}

std::vector<std::int64_t> sorted(std::vector<std::int64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// "sorted, the first difference is 512 (plan) vs 640 (batch)", or the count when one list is a prefix.
std::string first_difference(const std::vector<std::int64_t>& plan, const std::vector<std::int64_t>& batch) {
  const auto [p, b] = std::mismatch(plan.begin(), plan.end(), batch.begin(), batch.end());
  if (p == plan.end() || b == batch.end()) return "";
  return "; sorted by length, the first difference is " + std::to_string(*p) + " (plan) vs " +
         std::to_string(*b) + " (batch)";
}

std::string scenario_hint(const Scenario& scenario) {
  return "dump a plan of this scenario: zeppelin-bench plan " + scenario.source_file.string() +
         " --iteration I --format json";
}

// What the executor would find only after the run started (exit 3, "a bug in the strategy"), found now
// and blamed on the file (exit 2), one problem per line: a plan the lowering refuses, a Program that could
// deadlock (lower::verify), and sizes the scenario's model contradicts (plan_sizes.hpp). Returns the
// Program, which the run then executes (lowered once).
std::shared_ptr<lower::Program> check_program_of_file(const plan::Plan& plan, const std::string& plan_file,
                                                      const plan::OpSources& sources, const CostModel& cost,
                                                      Passes passes) {
  const auto as_input = [&plan_file](const std::vector<Problem>& found, const std::string& prefix) {
    std::vector<Problem> problems;
    for (const Problem& p : found) {
      Location where = p.where;
      if (where.file.empty()) where.file = plan_file;
      problems.push_back({where, prefix + p.what, problems.empty() ? p.hint : ""});
    }
    if (!problems.empty()) throw Error(ExitCode::bad_input, std::move(problems));
  };
  lower::Program program;
  try {
    program = lower::lower(plan, cost, {.backward = passes == Passes::fwd_bwd});
  } catch (const Error& e) {
    as_input(e.problems(), "lowering: ");
  }
  std::vector<Problem> found;
  const std::vector<std::string> deadlocks = lower::verify(program, verify_problems_listed);
  for (const std::string& problem : deadlocks)
    found.push_back(
        {Location{plan_file, ""}, problem,
         "the plan's ops could deadlock or name what does not exist; `zeppelin-bench plan --verify` "
         "explains the rules"});
  as_input(found, "lower::verify: ");
  as_input(plan_size_problems(plan, program, cost, plan_file, verify_problems_listed, sources), "");
  return std::make_shared<lower::Program>(std::move(program));
}

}  // namespace

int match_plan_to_scenario(const plan::Plan& plan, const std::string& plan_file, const Scenario& scenario,
                           const Workload& workload, const std::function<void(const Batch&)>& on_batch) {
  const ClusterSpec& cluster = scenario.cluster;
  if (plan.world_size != cluster.world_size()) {
    throw_input_error(
        {plan_file, "world_size"},
        "the plan is for world_size " + std::to_string(plan.world_size) + " but the scenario's cluster has " +
            std::to_string(cluster.world_size()) + " GPUs (" + std::to_string(cluster.nodes) +
            (cluster.nodes == 1 ? " node of " : " nodes of ") + std::to_string(cluster.gpus_per_node) + ")",
        scenario_hint(scenario));
  }
  if (plan.gpus_per_node != cluster.gpus_per_node) {
    throw_input_error({plan_file, "gpus_per_node"},
                      "the plan has gpus_per_node " + std::to_string(plan.gpus_per_node) +
                          " but the scenario's cluster has " + std::to_string(cluster.gpus_per_node),
                      scenario_hint(scenario));
  }
  std::vector<std::int64_t> lengths;
  for (const auto& s : plan.sequences) lengths.push_back(s.length);
  lengths = sorted(std::move(lengths));
  // Each batch is drawn, compared and dropped; only iteration 0's is kept, for the message. Without an
  // observer the search stops at the first match, with one every iteration is drawn for it.
  const int iterations = scenario.workload.iterations;
  std::optional<int> matched;
  std::vector<std::int64_t> first;
  for (int i = 0; i < iterations && (!matched || on_batch); ++i) {
    const Batch batch = workload.batch(i);
    if (on_batch) on_batch(batch);
    std::vector<std::int64_t> batch_lengths = sorted(batch.lengths);
    if (!matched && batch_lengths == lengths) matched = i;
    if (i == 0) first = std::move(batch_lengths);
  }
  if (matched) return *matched;
  throw_input_error({plan_file, "sequences"},
                    "the plan's sequences, " + documents_text(lengths) +
                        ", are the batch of no iteration of the scenario " + "(iterations 0.." +
                        std::to_string(iterations - 1) + "); iteration 0's batch has " +
                        documents_text(first) + first_difference(lengths, first),
                    scenario_hint(scenario) + " (the seed and workload must be the same)");
}

RunResult run_plan(const Scenario& scenario, plan::Plan plan, const std::string& plan_file,
                   const RunOptions& options, const plan::OpSources& sources) {
  RunResult result;
  result.scenario = scenario;
  result.scenario.gates.clear();
  const CostModel cost(scenario);
  const Workload workload(scenario);
  result.long_documents = long_document_record(scenario, cost);
  const int iteration =
      match_plan_to_scenario(plan, plan_file, scenario, workload, [&result](const Batch& batch) {
        result.workload.add(batch);
        result.long_documents.add(batch.iteration, batch.lengths);
      });

  // A hand-edited plan is input: a broken promise is the file's fault (exit 2), and must be caught before
  // an executor relies on it.
  const auto problems = plan::verify(
      plan, {.token_capacity = tensor_parallel_token_capacity(cost, scenario.parallelism.tensor),
             .max_problems = verify_problems_listed + 1,
             .heads = scenario.model.heads,
             .capacity_of_tp_width = [&](int w) { return tensor_parallel_token_capacity(cost, w); }});
  if (!problems.empty()) {
    ProblemList list;
    for (std::size_t i = 0; i < problems.size() && i < verify_problems_listed; ++i) {
      list.add({plan_file, ""}, "plan::verify: " + problems[i],
               i == 0 ? "the plan breaks a promise of core/plan/plan.hpp; fix the file" : "");
    }
    if (problems.size() > verify_problems_listed)
      list.add({plan_file, ""}, "plan::verify: ... and more problems");
    list.throw_if_any();
  }
  plan.lowered = check_program_of_file(plan, plan_file, sources, cost, scenario.passes);

  SystemResult sr;
  sr.system.name = plan.strategy.empty() ? "plan" : plan.strategy;
  sr.system.label = plan.system.empty() ? "plan:" + plan_file : plan.system;
  sr.system.options = {{"plan", plan_file}};
  const auto executor = make_executor(scenario.backend);
  // Before any planning: a backend that cannot run here ends the run now, before any output claims it ran.
  executor->prepare(scenario.cluster);
  result.runtime = executor->runtime_facts();
  const auto simulator = simulator_for(scenario.backend, options.simulate_measured);
  result.backend = executor->backend();
  if (options.on_progress) options.on_progress({sr.system.label, 0, 1, 0, 1});
  IterationResult it = iteration_of(plan, iteration);
  execute_iteration(*executor, result.scenario, cost, std::move(plan), std::move(it), sr, simulator.get());
  result.systems.push_back(std::move(sr));
  return result;
}

}  // namespace zb
