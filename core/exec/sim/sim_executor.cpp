#include "core/exec/sim/sim_executor.hpp"

#include "core/common/error.hpp"
#include "core/exec/sim/platform.hpp"
#include "core/exec/sim/simulate.hpp"
#include "core/exec/sim/task_graph.hpp"
#include "core/exec/sim/trace_builder.hpp"

namespace zb::sim {

Trace SimExecutor::run(const plan::Plan& plan, const RunContext& context) {
  const ClusterSpec& cluster = context.scenario.cluster;
  if (plan.world_size != cluster.world_size() || plan.ranks.size() != static_cast<std::size_t>(plan.world_size)) {
    throw Error(ExitCode::runtime, Location{},
                "the plan is for " + std::to_string(plan.world_size) + " ranks but the cluster has " +
                    std::to_string(cluster.world_size()) + " GPUs");
  }
  const int layers = context.cost.model().layers;
  if (!plan.feasible()) {
    Trace trace;
    trace.backend = "sim";
    trace.simulator_version = simgrid_version();
    trace.model_note = "not run: the plan does not fit in GPU memory";
    trace.world_size = plan.world_size;
    trace.gpus_per_node = plan.gpus_per_node;
    trace.nics_per_node = cluster.nics_per_node;
    trace.layers = layers;
    return trace;
  }
  const Platform platform(cluster, context.cost.profile().p2p_bandwidth_efficiency);
  const TaskGraph graph(plan, context.cost, context.scenario.passes == Passes::fwd_bwd);
  const TaskTimes times = simulate_isolated(platform, graph);
  Trace trace = build_trace(plan, platform, graph, times, layers);
  trace.nics_per_node = cluster.nics_per_node;
  return trace;
}

}  // namespace zb::sim
