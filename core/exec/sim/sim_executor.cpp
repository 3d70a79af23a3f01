#include "core/exec/sim/sim_executor.hpp"

#include "core/common/error.hpp"
#include "core/exec/sim/platform.hpp"
#include "core/exec/sim/simulate.hpp"
#include "core/exec/sim/task_graph.hpp"
#include "core/exec/sim/trace_builder.hpp"

namespace zb::sim {

Trace SimExecutor::run(const lower::Program& program, const ExecContext& context) {
  const ClusterSpec& cluster = context.cluster();
  if (program.world_size != cluster.world_size()) {
    throw Error(ExitCode::runtime, Location{},
                "the program is for " + std::to_string(program.world_size) + " ranks but the cluster has " +
                    std::to_string(cluster.world_size()) + " GPUs");
  }
  const Platform platform(cluster, context.cost.profile());
  // Seeded per-rank compute multipliers of this iteration (none unless the profile asks for jitter or
  // stragglers); the planner never sees them.
  TaskGraphOptions options;
  options.compute_scale =
      compute_multipliers(context.cost.profile(), context.seed, context.iteration, program.world_size);
  const TaskGraph graph(program, options);
  const TaskTimes times = simulate_isolated(platform, graph);
  Trace trace = build_trace(platform, graph, times, context.cost.model().layers);
  trace.nics_per_node = cluster.nics_per_node;
  return trace;
}

}  // namespace zb::sim
