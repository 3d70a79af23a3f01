#include "core/run/iteration.hpp"

#include <algorithm>
#include <optional>

#include "core/cost/iteration_cost.hpp"
#include "core/exec/backend_registry.hpp"
#include "core/exec/sim/gradient_collective.hpp"
#include "core/exec/sim/task_graph.hpp"
#include "core/metrics/metrics.hpp"
#include "core/run/execute.hpp"
#include "core/strategies/tensor_parallel.hpp"

namespace zb {

IterationResult iteration_of(const plan::Plan& plan, int iteration) {
  IterationResult it;
  it.iteration = iteration;
  it.feasible = plan.feasible();
  it.oom = plan.oom;
  it.planner_seconds = plan.planner_seconds;
  it.predicted_seconds = plan.predicted.iteration_seconds;
  it.plan_info = plan.info;
  return it;
}

LongDocumentRecord long_document_record(const Scenario& scenario, const CostModel& cost) {
  const int t = tensor_parallel_degree(scenario);
  LongDocumentRecord record;
  record.tensor_parallel = std::max(1, t);
  record.gpu_capacity_tokens = tensor_parallel_token_capacity(cost, t);
  record.node_capacity_tokens =
      record.gpu_capacity_tokens * (scenario.cluster.gpus_per_node / std::max(1, t));
  return record;
}

std::unique_ptr<Executor> simulator_for(std::string_view backend, bool wanted) {
  if (!wanted || is_simulated_backend(backend)) return nullptr;  // nothing to compare with
  return make_executor("sim");
}

LayerWindow layer_window_of(const Trace& trace, const CostModel& cost) {
  LayerWindow w{trace.layer.forward, trace.backward ? trace.layer.backward : 0.0};
  const double capacity = cost.cluster().nic.bandwidth * cost.profile().nic_efficiency();
  std::vector<double> forward, backward;
  for (const LinkLoad& link : trace.links) {
    if ((link.kind != LinkKind::nic_tx && link.kind != LinkKind::nic_rx) || link.measured) continue;
    forward.push_back(binned_bytes(link, 0.0, w.forward, 1).front());
    if (w.backward > 0) backward.push_back(binned_bytes(link, w.forward, w.forward + w.backward, 1).front());
  }
  w.forward_nic_busy = nic_busy_fraction(forward, capacity, w.forward);
  w.backward_nic_busy = nic_busy_fraction(backward, capacity, w.backward);
  return w;
}

WholeIterationParts simulated_whole_iteration_parts(const plan::Plan& plan, const Trace& trace,
                                                    const Scenario& scenario, const ExecContext& context) {
  // The parts outside the layers are the same model for every backend: the gradient collectives are timed
  // on the SimGrid model of the scenario's cluster (the reference backend has no network of its own).
  const WholeIterationSetup setup = whole_iteration_setup(context.cost, tensor_parallel_degree(scenario));
  const std::vector<BucketCollectiveSeconds> buckets = trace.backward
                                                           ? sim::simulate_bucket_seconds(context.cost, setup)
                                                           : std::vector<BucketCollectiveSeconds>{};
  // A simulated iteration's compute ran under the seeded multipliers (none by default); a measured one's
  // compute is what the hardware did.
  const std::vector<double> scale = trace.backend == "sim"
                                        ? sim::compute_multipliers(context.cost.profile(), context.seed,
                                                                   context.iteration, trace.world_size)
                                        : std::vector<double>{};
  return whole_iteration_parts(context.cost, setup, plan::whole_iteration_tokens_per_rank(plan, setup.tensor),
                               layer_window_of(trace, context.cost), buckets, scale);
}

void execute_iteration(Executor& executor, const Scenario& scenario, const CostModel& cost, plan::Plan plan,
                       IterationResult iteration, SystemResult& system, Executor* simulator) {
  if (iteration.feasible) {
    // The iteration's index reaches the executor: the simulator's seeded compute jitter draws by it.
    const ExecContext context = exec_context(scenario, cost, iteration.iteration);
    // The Program the prediction lowered (else lowered now), checked once, for both executors below.
    std::shared_ptr<const lower::Program> program =
        program_for_run(plan, cost, scenario.passes, executor.reads_rows());
    plan.lowered.reset();  // the plan kept below must not hold the Program after this iteration
    Trace trace = executor.run(*program, context);
    // Same plan, same Program, same profile: what the simulator predicts for the run just measured. Only
    // when the executor computed the model itself; a stand-in's times would be compared with another model.
    std::optional<Trace> simulated;
    if (simulator != nullptr && trace.stand_in.empty()) simulated = simulator->run(*program, context);
    program.reset();
    iteration.metrics = compute_run_metrics(plan, trace, context.cost, scenario,
                                            simulated_whole_iteration_parts(plan, trace, scenario, context));
    if (simulated && iteration.metrics.layers_seconds > 0) {
      iteration.metrics.simulated_layers_seconds = simulated->layers * simulated->trace_seconds();
      iteration.metrics.simulation_ratio =
          iteration.metrics.simulated_layers_seconds / iteration.metrics.layers_seconds;
    }
    if (!system.has_trace) {
      system.first_trace = std::move(trace);
      system.first_plan = std::move(plan);
      system.has_trace = true;
    }
  }
  system.iterations.push_back(std::move(iteration));
}

}  // namespace zb
