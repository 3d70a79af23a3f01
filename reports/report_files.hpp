#pragma once
// One call for the `run` command: writes every requested report format into the output folder (created
// when missing), each file atomically, and returns the paths written.
//   json   → report.json             html  → report.html
//   trace  → trace-<label>.json per system with a trace
//   gbench → gbench.json
#include <filesystem>
#include <string>
#include <vector>

#include "core/run/run_result.hpp"
#include "reports/run_context.hpp"
#include "reports/summary.hpp"

namespace zb::reports {

[[nodiscard]] std::vector<std::filesystem::path> write_reports(const RunResult& run, const RunSummary& summary,
                                                               const RunContext& context,
                                                               const std::filesystem::path& directory,
                                                               const std::vector<std::string>& formats);

// A file-name-safe form of a system label: letters, digits, '.', '-' and '_' kept, anything else '_'.
[[nodiscard]] std::string file_name_safe(const std::string& label);

}  // namespace zb::reports
