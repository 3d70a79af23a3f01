#pragma once
// The pipeline of `zeppelin-bench run`, in one direction: scenario → workload → strategy → plan →
// executor → trace → metrics, for every system and iteration. Reporting is the caller's job.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/run/run_result.hpp"

namespace zb {

struct RunProgress {
  std::string system;
  int system_index = 0;
  int systems = 0;
  int iteration = 0;
  int iterations = 0;
};

struct RunOptions {
  std::function<void(const RunProgress&)> on_progress;  // called before each (system, iteration)
  bool verify_plans = true;  // run plan::verify on every plan up to verify_max_ranks ranks
  int verify_max_ranks = 64;
  // A measured backend (reference, cuda) also simulates every Program it executed, under the same hardware
  // profile, for the simulation ratio (docs/METRICS.md). Off on the processes that write no report (MPI
  // ranks other than 0), which would only repeat the simulation.
  bool simulate_measured = true;
};

// Applies command-line overrides to a loaded scenario (each one validated: bad values are exit 2) and
// returns them in a fixed order (backend, iterations, seed, output directory), for the report.
std::vector<ScenarioOverride> apply_overrides(Scenario& scenario, std::optional<std::string> backend,
                                              std::optional<int> iterations,
                                              std::optional<std::uint64_t> seed,
                                              std::optional<std::string> out_dir);

[[nodiscard]] RunResult run_scenario(const Scenario& scenario, const RunOptions& options = {});

}  // namespace zb
