#pragma once
// How a report was produced, captured once per run and shared by the JSON, HTML and gbench reports:
// - what ran: the backend and every command-line override (same inputs → same values);
// - provenance, which changes from run to run on the same inputs: the build (version, git revision and
//   whether the tree was dirty, the versions of the libraries the binary links), the command line, the
//   host (CPU, memory, GPUs, driver), the date, and every NCCL_* environment variable (they change which
//   NIC carries which bytes, so a result without them cannot be reproduced);
// - the backend's option values (defaults, or their ZB_* environment variables), so a report says how its
//   backend was configured (core/exec/backend_registry.hpp);
// - on a backend that runs on GPUs (cuda), what its executor asked at run time: the versions of the
//   driver, the CUDA runtime, NCCL, cuDNN, cuBLASLt and CUPTI in use, and the GPU (RunResult::runtime,
//   copied here by the run command; reports never ask a device themselves).
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/exec/backend_registry.hpp"
#include "core/run/run_result.hpp"
#include "reports/host_facts.hpp"

namespace zb::reports {

struct LinkedLibrary {
  std::string name;     // "simgrid"
  std::string version;  // "3.32"
};

struct RunContext {
  // What ran.
  std::string backend;
  bool simulated = false;
  std::vector<ScenarioOverride> overrides;
  std::string plan_file;  // `run --plan FILE`: that plan ran instead of the scenario's systems ("" = none)
  // Provenance.
  std::string tool_version;
  std::string git_sha;  // "unknown" outside a git checkout
  bool git_dirty = false;
  std::string build_type;
  std::vector<LinkedLibrary> libraries;  // only what the binary links, in a fixed order
  std::vector<std::string> argv;
  HostFacts host;
  std::string date_utc;                                 // ISO-8601, e.g. 2026-11-30T10:40:16Z
  std::map<std::string, std::string> nccl_environment;  // sorted by name
  RuntimeFacts runtime;  // the executor's, asked at run time; empty for sim and reference
  std::vector<ConfiguredOption> backend_options;  // the values this process's run used; none for sim
};

// Reads the build facts, the command line (/proc/self/cmdline), the host, the clock and the environment of
// this process, and the backend's option values from the registry (the same defaults and environment its
// executor was made from in this process).
[[nodiscard]] RunContext capture_run_context(const std::string& backend,
                                             std::vector<ScenarioOverride> overrides = {});

// The arguments this process was started with, argv[0] included; empty where /proc is not mounted.
[[nodiscard]] std::vector<std::string> process_arguments();

// The libraries this binary links, with the versions found when it was configured (the build's view; the
// versions a GPU run actually loaded are RunContext::runtime's).
[[nodiscard]] std::vector<LinkedLibrary> linked_libraries();

// The current time in UTC as ISO-8601 with a 'Z' suffix.
[[nodiscard]] std::string utc_timestamp_now();

// The provenance part of the context, as report.json writes it (its "provenance" section); "runtime"
// only when the executor asked something at run time and the backend is not the simulator.
[[nodiscard]] nlohmann::ordered_json provenance_to_json(const RunContext& context,
                                                        const std::string& scenario_file);

// provenance.runtime: {"asked_by", "libraries": {"cuda_driver": "13.0", ...}, "gpu": {...}}.
[[nodiscard]] nlohmann::ordered_json runtime_facts_to_json(const RuntimeFacts& facts);

// provenance.backend: {"name", "options": {"heads": {"value": 2, "from": "default"}, "transport": {"value":
// "mpi", "from": "environment ZB_REF_TRANSPORT"}, ...}}; integers and numbers as JSON numbers.
[[nodiscard]] nlohmann::ordered_json backend_options_to_json(const std::string& backend,
                                                             const std::vector<ConfiguredOption>& options);

[[nodiscard]] nlohmann::ordered_json overrides_to_json(const std::vector<ScenarioOverride>& overrides);

}  // namespace zb::reports
