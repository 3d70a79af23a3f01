#include "reports/run_context.hpp"

#include <unistd.h>

#include <array>
#include <chrono>
#include <ctime>
#include <string_view>

#include <fmt/format.h>

#include "zb/build_info.hpp"

extern char** environ;  // POSIX: the process environment (read only here)

namespace zb::reports {
namespace {

std::string host_name() {
  std::array<char, 256> buffer{};
  if (gethostname(buffer.data(), buffer.size() - 1) != 0) return "unknown";
  return std::string(buffer.data());
}

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
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday, utc.tm_hour,
                     utc.tm_min, utc.tm_sec);
}

RunContext capture_run_context(const std::string& backend) {
  RunContext context;
  context.tool_version = build::version;
  context.git_sha = build::git_sha;
  context.build_type = build::build_type;
  context.host = host_name();
  context.date_utc = utc_timestamp_now();
  context.backend = backend;
  context.simulated = backend == "sim";
  context.simgrid_version = build::simgrid_version;
  if (build::have_cuda) context.cuda_version = build::cuda_version;
  // The build records that NCCL was found but not its version; the cuda backend reads it at run time.
  if (build::have_nccl) context.nccl_version = "found at build time (version not recorded)";
  context.nccl_environment = nccl_variables();
  return context;
}

nlohmann::ordered_json context_to_json(const RunContext& context) {
  nlohmann::ordered_json out;
  out["tool"] = "zeppelin-bench";
  out["tool_version"] = context.tool_version;
  out["git_sha"] = context.git_sha;
  out["build_type"] = context.build_type;
  out["host"] = context.host;
  out["date"] = context.date_utc;
  out["backend"] = context.backend;
  out["simulated"] = context.simulated;
  out["simgrid_version"] = context.simgrid_version;
  out["cuda_version"] = context.cuda_version ? nlohmann::ordered_json(*context.cuda_version) : nlohmann::ordered_json();
  out["nccl_version"] = context.nccl_version ? nlohmann::ordered_json(*context.nccl_version) : nlohmann::ordered_json();
  out["nccl_environment"] = nlohmann::ordered_json::object();
  for (const auto& [name, value] : context.nccl_environment) out["nccl_environment"][name] = value;
  return out;
}

}  // namespace zb::reports
