#pragma once
// A small, hand-built RunResult for reporter tests (no planner, no simulator): 2 nodes × 4 GPUs with 2 NICs
// each, three systems (zeppelin, ring-cp, and uniform-cp which runs out of memory), three iterations, two
// gates (one passes, one fails), and a trace per feasible system with compute, comm and relay events and
// NIC load series. Every number is fixed, so reports built from it can be pinned by golden files.
#include <string>
#include <vector>

#include "core/run/run_result.hpp"
#include "reports/run_context.hpp"

namespace zb::test {

struct SampleOptions {
  std::string scenario_name = "sample";
  int iterations = 3;
  double time_scale = 1.0;  // multiplies every iteration time (a "slower" candidate)
};

[[nodiscard]] RunResult sample_run(const SampleOptions& options = {});

// A context with fixed values (no host, clock or environment), so a golden file can hold it.
[[nodiscard]] reports::RunContext fixed_context();

}  // namespace zb::test
