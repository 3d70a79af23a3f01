#include "core/run/iteration.hpp"

#include "core/cost/iteration_cost.hpp"
#include "core/exec/sim/gradient_collective.hpp"
#include "core/metrics/metrics.hpp"

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

void execute_iteration(Executor& executor, const RunContext& context, plan::Plan plan, IterationResult iteration,
                       SystemResult& system) {
  if (iteration.feasible) {
    Trace trace = execute(executor, plan, context);
    // The parts outside the layers are the same model for every backend: the gradient collectives are timed
    // on the SimGrid model of the scenario's cluster (the reference backend has no network of its own).
    const WholeIterationSetup setup = whole_iteration_setup(context.cost, tensor_parallel_degree(context.scenario));
    const std::vector<BucketCollectiveSeconds> buckets =
        trace.backward ? sim::simulate_bucket_seconds(context.cost, setup) : std::vector<BucketCollectiveSeconds>{};
    iteration.metrics = compute_run_metrics(plan, trace, context.cost, context.scenario,
                                            whole_iteration_parts_of(plan, trace, context.cost, setup, buckets));
    if (!system.has_trace) {
      system.first_trace = std::move(trace);
      system.first_plan = std::move(plan);
      system.has_trace = true;
    }
  }
  system.iterations.push_back(std::move(iteration));
}

}  // namespace zb
