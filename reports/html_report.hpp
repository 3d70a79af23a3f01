#pragma once
// The HTML report: ONE self-contained file (inline CSS and inline SVG; no network, no script) that reads
// well offline as a CI artefact. Built from the same RunSummary as the console and JSON reports. Every
// string that comes from the scenario (names, labels, descriptions) is HTML-escaped.
#include <filesystem>
#include <string>

#include "core/run/run_result.hpp"
#include "reports/run_context.hpp"
#include "reports/summary.hpp"

namespace zb::reports {

[[nodiscard]] std::string html_report(const RunResult& run, const RunSummary& summary,
                                      const RunContext& context);

void write_html_report(const RunResult& run, const RunSummary& summary, const RunContext& context,
                       const std::filesystem::path& path);

}  // namespace zb::reports
