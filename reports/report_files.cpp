#include "reports/report_files.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include "core/common/error.hpp"
#include "reports/gbench_report.hpp"
#include "reports/html_report.hpp"
#include "reports/json_report.hpp"
#include "reports/perfetto_trace.hpp"
#include "reports/report_set.hpp"

namespace zb::reports {

std::string file_name_safe(const std::string& label) {
  std::string out = label;
  for (char& c : out) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '-' || c == '_';
    if (!keep) c = '_';
  }
  if (out.empty() || out.front() == '.') out.insert(out.begin(), '_');  // never a hidden or empty name
  return out;
}

std::vector<std::string> trace_file_names(const std::vector<std::string>& labels) {
  // Compared in lower case: on a case-insensitive file system (macOS, Windows) "A" and "a" are one file.
  auto folded = [](std::string name) {
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    return name;
  };
  std::set<std::string> taken;
  std::vector<std::string> names;
  for (const std::string& label : labels) {
    const std::string base = "trace-" + file_name_safe(label);
    std::string name = base + ".json";
    for (int n = 2; taken.count(folded(name)) > 0; ++n) name = base + "-" + std::to_string(n) + ".json";
    taken.insert(folded(name));
    names.push_back(name);
  }
  return names;
}

namespace {

void check_formats(const std::vector<std::string>& formats) {
  for (const std::string& format : formats) {
    if (format != "json" && format != "html" && format != "trace" && format != "gbench") {
      Location where;
      where.json_path = "output.formats";
      throw_input_error(where, "unknown report format \"" + format + "\"", "use json, html, trace or gbench");
    }
  }
}

}  // namespace

std::vector<std::filesystem::path> write_reports(const RunResult& run, const RunSummary& summary,
                                                 const RunContext& context,
                                                 const std::filesystem::path& directory,
                                                 const std::vector<std::string>& formats) {
  check_formats(formats);
  auto wants = [&](const char* format) {
    return std::find(formats.begin(), formats.end(), format) != formats.end();
  };
  return publish_report_set(directory, [&](const std::filesystem::path& staging) {
    std::vector<std::string> written;
    if (wants("json")) {
      written.emplace_back("report.json");
      write_json_report(run, summary, context, staging / written.back());
    }
    if (wants("html")) {
      written.emplace_back("report.html");
      write_html_report(run, summary, context, staging / written.back());
    }
    if (wants("trace")) {
      std::vector<const SystemResult*> traced;
      std::vector<std::string> labels;
      for (const SystemResult& system : run.systems) {
        if (!system.has_trace) continue;
        traced.push_back(&system);
        labels.push_back(system.system.label);
      }
      const std::vector<std::string> names = trace_file_names(labels);
      for (std::size_t i = 0; i < traced.size(); ++i) {
        written.push_back(names[i]);
        write_perfetto_trace(traced[i]->first_trace, trace_labels(run, labels[i]), staging / names[i]);
      }
    }
    if (wants("gbench")) {
      written.emplace_back("gbench.json");
      write_gbench_report(summary, context, staging / written.back());
    }
    return written;
  });
}

}  // namespace zb::reports
