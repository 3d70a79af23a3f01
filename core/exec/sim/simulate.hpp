#pragma once
// Running a TaskGraph on a Platform in SimGrid.
//
// SimGrid's s4u::Engine is a process singleton that cannot be torn down and re-created (a second engine
// in the same process inherits the first one's clock and state). Every simulation therefore runs in a
// forked child: the parent builds the platform description and the task graph, forks, the child builds
// the SimGrid platform, runs, writes each task's start and end time into a pipe and _exit()s; the
// parent reads the times back. The parent never touches SimGrid, so any number of simulations can run
// in one process (tests, the CLI's many systems and iterations).
#include <string>
#include <vector>

#include "core/exec/sim/platform.hpp"
#include "core/exec/sim/task_graph.hpp"

namespace zb::sim {

struct TaskTimes {
  std::vector<double>
      start;                // when the task began (compute: when the stream picked it; flow: first byte out)
  std::vector<double> end;  // when it completed (flow: last byte in)
};

// In a forked child (see above). Throws zb::Error(runtime) with the child's message when it fails.
[[nodiscard]] TaskTimes simulate_isolated(const Platform& platform, const TaskGraph& graph);

// In this process; initialises SimGrid, so at most once per process. Throws std::runtime_error when the
// graph cannot finish (a dependency cycle or an unmatched rendezvous).
[[nodiscard]] TaskTimes simulate_in_this_process(const Platform& platform, const TaskGraph& graph);

// "SimGrid 3.32.0" from the headers this build used.
[[nodiscard]] std::string simgrid_version();

}  // namespace zb::sim
