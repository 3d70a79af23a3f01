#include "reports/run_context.hpp"

#include <chrono>
#include <ctime>
#include <fstream>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "core/common/allocator.hpp"
#include "zb/build_info.hpp"

extern char** environ;  // POSIX: the process environment (read only here)

namespace zb::reports {
namespace {

std::map<std::string, std::string> nccl_variables() {
  std::map<std::string, std::string> out;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    if (text.rfind("NCCL_", 0) != 0) continue;
    const std::size_t equals = text.find('=');
    if (equals == std::string_view::npos) continue;
    out.emplace(std::string(text.substr(0, equals)), std::string(text.substr(equals + 1)));
  }
  return out;
}

}  // namespace

std::string utc_timestamp_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday,
                     utc.tm_hour, utc.tm_min, utc.tm_sec);
}

std::vector<LinkedLibrary> linked_libraries() {
  // The binary links SimGrid, fmt, nlohmann_json and CLI11 always and MPI when it was found. A build with
  // CUDA also links the CUDA runtime, NCCL, cuBLASLt, cuDNN, CUPTI and NVRTC (the cuda backend and its
  // kernels), but the versions the build found are not listed here: the shared libraries a GPU run loads
  // (and the driver) may be other ones. The cuda executor asks them at run time instead, and the report
  // writes its answers as provenance.runtime (RunContext::runtime), only for runs that used them.
  std::vector<LinkedLibrary> out{{"simgrid", build::simgrid_version},
                                 {"fmt", build::fmt_version},
                                 {"nlohmann_json", build::nlohmann_json_version},
                                 {"cli11", build::cli11_version}};
  // The allocator serving this process (mimalloc when the executable links it): planner times depend on it.
  const ProcessAllocator allocator = process_allocator();
  if (allocator.name == "mimalloc") out.push_back({"mimalloc", allocator.version});
  if (build::have_mpi) {
    out.push_back({"mpi", std::string_view(build::mpi_library_version).empty() ? "version not recorded"
                                                                               : build::mpi_library_version});
  }
  return out;
}

std::vector<std::string> process_arguments() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> out;
  std::string argument;
  while (std::getline(in, argument, '\0')) out.push_back(argument);  // NUL-terminated, one per argument
  return out;
}

RunContext capture_run_context(const std::string& backend, std::vector<ScenarioOverride> overrides) {
  RunContext context;
  context.backend = backend;
  context.simulated = is_simulated_backend(backend);
  context.overrides = std::move(overrides);
  context.tool_version = build::version;
  context.git_sha = build::git_sha;
  context.git_dirty = build::git_dirty;
  context.build_type = build::build_type;
  context.libraries = linked_libraries();
  context.argv = process_arguments();
  context.host = read_host_facts();
  context.date_utc = utc_timestamp_now();
  context.nccl_environment = nccl_variables();
  context.backend_options = configured_backend_options(backend);
  return context;
}

nlohmann::ordered_json runtime_facts_to_json(const RuntimeFacts& facts) {
  nlohmann::ordered_json out;
  out["asked_by"] = facts.asked_by;
  out["libraries"] = nlohmann::ordered_json::object();
  for (const auto& [name, version] : facts.libraries) out["libraries"][name] = version;
  out["gpu"] = nlohmann::ordered_json{{"name", facts.gpu_name},
                                      {"compute_capability", facts.gpu_compute_capability},
                                      {"sm_count", facts.gpu_sm_count},
                                      {"memory_bytes", facts.gpu_memory_bytes}};
  return out;
}

namespace {

// An option's value as JSON: integers and numbers as numbers, so a script compares them as such. The
// executor has parsed the same text already; a value that still does not read as a number stays text.
nlohmann::ordered_json typed_value(const ConfiguredOption& option) {
  try {
    std::size_t used = 0;
    if (option.type == BackendOptionType::integer) {
      const long long value = std::stoll(option.value, &used);
      if (used == option.value.size()) return value;
    } else if (option.type == BackendOptionType::number) {
      const double value = std::stod(option.value, &used);
      if (used == option.value.size()) return value;
    }
  } catch (const std::logic_error&) {
  }
  return option.value;
}

}  // namespace

nlohmann::ordered_json backend_options_to_json(const std::string& backend,
                                               const std::vector<ConfiguredOption>& options) {
  nlohmann::ordered_json values = nlohmann::ordered_json::object();
  for (const ConfiguredOption& option : options) {
    values[option.name] = {
        {"value", typed_value(option)},
        {"from", option.from_environment ? "environment " + option.environment : "default"}};
  }
  return {{"name", backend}, {"options", values}};
}

nlohmann::ordered_json overrides_to_json(const std::vector<ScenarioOverride>& overrides) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const ScenarioOverride& o : overrides) {
    out.push_back(nlohmann::ordered_json{{"flag", o.flag},
                                         {"path", o.json_pointer},
                                         {"value", nlohmann::ordered_json::parse(o.value.dump())}});
  }
  return out;
}

nlohmann::ordered_json provenance_to_json(const RunContext& context, const std::string& scenario_file) {
  nlohmann::ordered_json out;
  out["tool"] = "zeppelin-bench";
  out["tool_version"] = context.tool_version;
  out["build_type"] = context.build_type;
  out["git"] = nlohmann::ordered_json{{"sha", context.git_sha}, {"dirty", context.git_dirty}};
  out["libraries"] = nlohmann::ordered_json::object();
  for (const LinkedLibrary& library : context.libraries) out["libraries"][library.name] = library.version;
  out["argv"] = context.argv;
  out["scenario_file"] = scenario_file;
  out["date"] = context.date_utc;
  out["host"] = host_facts_to_json(context.host);
  out["nccl_environment"] = nlohmann::ordered_json::object();
  for (const auto& [name, value] : context.nccl_environment) out["nccl_environment"][name] = value;
  // A simulated run asked no device: it claims no driver, library version or GPU.
  if (!context.simulated && !is_simulated_backend(context.backend) && !context.runtime.empty())
    out["runtime"] = runtime_facts_to_json(context.runtime);
  out["backend"] = backend_options_to_json(context.backend, context.backend_options);
  return out;
}

}  // namespace zb::reports
