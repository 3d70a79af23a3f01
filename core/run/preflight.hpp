#pragma once
// What `run` would refuse that the scenario loader cannot see, checked up front so that `validate`
// refuses it too and `run` fails in its first second instead of after minutes (or by being killed): the
// workload's source must yield lengths (a lengths file present, numbers only, positive, under its size
// cap), and the run must fit in this machine's memory. Both are exit 2, naming the JSON path to change.
#include <cstdint>
#include <string>

#include "core/config/scenario.hpp"

namespace zb {

// The host memory a run needs, estimated from its sizes (docs/SCENARIOS.md, "How big a run can be").
struct RunSizeEstimate {
  double documents_per_iteration = 0;  // expected, from the workload's own length distribution
  int iterations = 0;
  int ranks = 0;  // the ranks strategies plan for (GPUs / tensor-parallel degree)
  int systems = 0;
  double batch_bytes = 0;      // the batch in flight, and each iteration's summary kept for the reports
  double iteration_bytes = 0;  // one (system, iteration) in flight: plan, program, trace
  double result_bytes = 0;     // what every (system, iteration) leaves in the result
  // The ring steps of the system with the widest groups, in flight with its iteration: ranks × the ranks
  // one group spans (its integer "degree"; every rank for ring-cp's "auto"), a step per (rank, peer).
  double ring_bytes = 0;
  int widest_ring = 1;          // the ranks that system's rings span
  int widest_ring_system = -1;  // its index in scenario.systems; -1 when no system has a known ring
  [[nodiscard]] double total_bytes() const {
    return batch_bytes + iteration_bytes + result_bytes + ring_bytes;
  }
};

// The estimate for `scenario` (its iterations, after any override). Throws what the workload's source
// throws (a bad lengths file), with "workload.<source key>" as the JSON path.
[[nodiscard]] RunSizeEstimate estimate_run_size(const Scenario& scenario);

// This machine's physical memory in bytes (0 when unknown, which disables the memory check).
[[nodiscard]] double machine_memory_bytes();

// Throws zb::Error (exit 2) when the workload's source is bad or the estimate exceeds `memory_bytes`,
// naming the figure and the key that dominates it.
void check_runnable(const Scenario& scenario, double memory_bytes = machine_memory_bytes());

}  // namespace zb
