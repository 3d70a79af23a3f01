#pragma once
// Turns the task times of one simulation into a Trace: one event per compute instruction, per
// collective member and per message end (a transfer's legs together), relay-leg events, ring-step
// transfers, per-link load series and the layer times.
#include "core/common/token_layout.hpp"
#include "core/exec/sim/platform.hpp"
#include "core/exec/sim/simulate.hpp"
#include "core/exec/sim/task_graph.hpp"
#include "core/exec/trace.hpp"

namespace zb::sim {

[[nodiscard]] Trace build_trace(const Platform& platform, const TaskGraph& graph, const TaskTimes& times,
                                int layers);

// Per-link load from the flows' times. A flow's rate is taken as constant over its bandwidth phase
// (start + route latency to end): exact for the bytes and the busy time of every link, an average for
// the shape of the series while max-min sharing changed the flow's rate (docs/SIMULATOR.md).
[[nodiscard]] std::vector<LinkLoad> link_loads(const Platform& platform, const TaskGraph& graph,
                                               const TaskTimes& times);

}  // namespace zb::sim
