#include "core/run/iteration.hpp"

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
    iteration.metrics = compute_run_metrics(plan, trace, context.cost, context.scenario);
    if (!system.has_trace) {
      system.first_trace = std::move(trace);
      system.first_plan = std::move(plan);
      system.has_trace = true;
    }
  }
  system.iterations.push_back(std::move(iteration));
}

}  // namespace zb
