#pragma once
// A small, hand-built RunResult for reporter tests (no planner, no simulator): 2 nodes × 4 GPUs with 2 NICs
// each, three systems (zeppelin, ring-cp, and uniform-cp which runs out of memory), three iterations, two
// gates (one passes, one fails), and a trace per feasible system with compute, comm and relay events and
// NIC load series. Every number is fixed, so reports built from it can be pinned by golden files. Each
// iteration carries plan facts as the strategies record them (ring-cp's degree resolved from "auto";
// zeppelin's layout: "hierarchical" in iterations i mod 3 = 0, 1 and "hybrid-dp" in i mod 3 = 2). The
// long-document shares of its batches are recorded against capacities of 8000 (GPU) and 32000 (node) tokens.
#include <cstdint>
#include <string>
#include <vector>

#include "core/run/run_result.hpp"
#include <nlohmann/json.hpp>

#include "reports/run_context.hpp"

namespace zb::test {

struct SampleOptions {
  std::string scenario_name = "sample";
  int iterations = 3;
  double time_scale = 1.0;  // multiplies every iteration time (a "slower" candidate)
  // Multiplies iteration i's times by 1 + jitter · ((i mod 3) − 1): a change that is not the same on every
  // batch, as a real code change is not.
  double jitter = 0.0;
  std::uint64_t seed = 1;          // enters the batches, so another seed gives other batches
  std::string backend = "sim";     // "cuda" stands for a measured run
  int ring_cp_oom_iterations = 0;  // the last this many iterations of ring-cp run out of memory
};

[[nodiscard]] RunResult sample_run(const SampleOptions& options = {});

// The building blocks of sample_run, for tests that need other systems: a system that fits in every
// iteration with the given iteration times (iteration i's plan facts are plan_infos[i mod size], none
// when empty), and one that runs out of memory in every iteration (an OOM plan records no facts).
[[nodiscard]] SystemResult feasible_system(const SystemSpec& spec, const std::vector<double>& times,
                                           double skew, const std::vector<nlohmann::json>& plan_infos = {});
[[nodiscard]] SystemResult oom_system(const SystemSpec& spec, int iterations);

// A context with fixed values (no host, clock or environment), so a golden file can hold it.
[[nodiscard]] reports::RunContext fixed_context();

// The report.json of sample_run(options) with fixed_context() (its backend that of the options), as
// `compare` reads it back from a file.
[[nodiscard]] nlohmann::json sample_report_json(const SampleOptions& options = {});

}  // namespace zb::test
