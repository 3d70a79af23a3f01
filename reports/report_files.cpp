#include "reports/report_files.hpp"

#include <algorithm>

#include "core/common/error.hpp"
#include "reports/gbench_report.hpp"
#include "reports/html_report.hpp"
#include "reports/json_report.hpp"
#include "reports/perfetto_trace.hpp"

namespace zb::reports {

std::string file_name_safe(const std::string& label) {
  std::string out = label;
  for (char& c : out) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                      c == '-' || c == '_';
    if (!keep) c = '_';
  }
  if (out.empty() || out.front() == '.') out.insert(out.begin(), '_');  // never a hidden or empty name
  return out;
}

std::vector<std::filesystem::path> write_reports(const RunResult& run, const RunSummary& summary,
                                                 const RunContext& context, const std::filesystem::path& directory,
                                                 const std::vector<std::string>& formats) {
  std::vector<std::filesystem::path> written;
  auto wants = [&](const char* format) { return std::find(formats.begin(), formats.end(), format) != formats.end(); };
  for (const std::string& format : formats) {
    if (format != "json" && format != "html" && format != "trace" && format != "gbench") {
      Location where;
      where.json_path = "output.formats";
      throw_input_error(where, "unknown report format \"" + format + "\"",
                        "use json, html, trace or gbench");
    }
  }
  if (wants("json")) {
    written.push_back(directory / "report.json");
    write_json_report(run, summary, context, written.back());
  }
  if (wants("html")) {
    written.push_back(directory / "report.html");
    write_html_report(run, summary, context, written.back());
  }
  if (wants("trace")) {
    for (const SystemResult& system : run.systems) {
      if (!system.has_trace) continue;
      written.push_back(directory / ("trace-" + file_name_safe(system.system.label) + ".json"));
      write_perfetto_trace(system.first_trace, TraceLabels{run.scenario.name, system.system.label}, written.back());
    }
  }
  if (wants("gbench")) {
    written.push_back(directory / "gbench.json");
    write_gbench_report(summary, context, written.back());
  }
  return written;
}

}  // namespace zb::reports
