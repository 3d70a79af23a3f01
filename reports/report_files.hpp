#pragma once
// One call for the `run` command: writes every requested report format as one set into the output folder
// (reports/report_set.hpp: staged next to it, then renamed into place, replacing a previous set as a
// whole) and returns the paths written.
//   json   → report.json             html  → report.html
//   trace  → trace-<label>.json per system with a trace (unique: see trace_file_names)
//   gbench → gbench.json
#include <filesystem>
#include <string>
#include <vector>

#include "core/run/run_result.hpp"
#include "reports/run_context.hpp"
#include "reports/summary.hpp"

namespace zb::reports {

[[nodiscard]] std::vector<std::filesystem::path> write_reports(const RunResult& run,
                                                               const RunSummary& summary,
                                                               const RunContext& context,
                                                               const std::filesystem::path& directory,
                                                               const std::vector<std::string>& formats);

// A file-name-safe form of a system label: letters, digits, '.', '-' and '_' kept, anything else '_'.
[[nodiscard]] std::string file_name_safe(const std::string& label);

// The trace file of each label, in order: "trace-<file_name_safe(label)>.json", or, when an earlier
// label took that name (labels "a/b" and "a_b" both make trace-a_b.json; names differing only in case
// are one file on some file systems), the first free "trace-<...>-2.json", "-3", ... Deterministic: the
// same labels in the same order always get the same names.
[[nodiscard]] std::vector<std::string> trace_file_names(const std::vector<std::string>& labels);

}  // namespace zb::reports
