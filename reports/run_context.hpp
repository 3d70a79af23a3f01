#pragma once
// Where and how a report was produced: tool version and git revision, build type, host, date, backend and
// the library versions behind it, and every NCCL_* environment variable (they change which NIC carries
// which bytes, so a result without them cannot be reproduced). Captured once per run and shared by the
// JSON and gbench reports.
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace zb::reports {

struct RunContext {
  std::string tool_version;
  std::string git_sha;
  std::string build_type;
  std::string host;
  std::string date_utc;  // ISO-8601, e.g. 2026-11-30T10:40:16Z
  std::string backend;
  bool simulated = false;
  std::string simgrid_version;
  std::optional<std::string> cuda_version;  // none when built without CUDA
  std::optional<std::string> nccl_version;  // none when built without NCCL
  std::map<std::string, std::string> nccl_environment;  // sorted by name
};

// Reads the build facts, the host name, the clock and the environment of this process.
[[nodiscard]] RunContext capture_run_context(const std::string& backend);

// The current time in UTC as ISO-8601 with a 'Z' suffix.
[[nodiscard]] std::string utc_timestamp_now();

[[nodiscard]] nlohmann::ordered_json context_to_json(const RunContext& context);

}  // namespace zb::reports
