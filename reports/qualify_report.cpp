#include "reports/qualify_report.hpp"

#include <fmt/format.h>

#include <fstream>
#include <system_error>

#include "core/common/error.hpp"
#include "core/config/units.hpp"
#include "reports/host_facts.hpp"
#include "reports/svg.hpp"
#include "reports/terminal_text.hpp"

namespace zb::reports {
namespace {

using qualify::Probe;
using qualify::Verdict;

std::string value_text(Probe probe, double value) {
  if (probe == Probe::gemm || probe == Probe::attention) return format_flops(value);
  return format_bandwidth(value);
}

std::string latency_text(double seconds) {
  return seconds >= 0 ? fmt::format("{:.1f} µs", seconds * 1e6) : "–";
}

void write_atomically(const std::filesystem::path& file, const std::string& text) {
  const std::filesystem::path partial = file.string() + ".partial";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out)
      throw Error(ExitCode::runtime, Location{}, "cannot write " + partial.string(),
                  "check the output folder");
  }
  std::error_code ec;
  std::filesystem::rename(partial, file, ec);
  if (ec)
    throw Error(ExitCode::runtime, Location{}, "cannot rename " + partial.string() + ": " + ec.message());
}

}  // namespace

std::string qualify_console(const qualify::QualifyResult& r) {
  std::string out = fmt::format("qualify {} — backend {}, {} ({} process{})\n", terminal_field(r.scenario),
                                r.backend, r.launch, r.world_size, r.world_size == 1 ? "" : "es");
  out += fmt::format("{:<10} {:<52} {:<18} {:>12} {:>10} {:>12}  {}\n", "probe", "subject", "shape", "value",
                     "latency", "floor", "verdict");
  for (const Verdict& v : r.verdicts) {
    const qualify::Measurement& m = v.measurement;
    out += fmt::format("{:<10} {:<52} {:<18} {:>12} {:>10} {:>12}  {}\n", qualify::to_string(m.probe),
                       m.subject, m.shape, value_text(m.probe, m.value), latency_text(m.latency),
                       v.floor > 0 ? value_text(m.probe, v.floor) : "–", v.passed ? "ok" : "BELOW FLOOR");
  }
  for (const std::string& note : r.notes) out += "note: " + note + "\n";
  const int failures = r.failures();
  if (failures == 0) {
    out += fmt::format("qualified: all {} figures at or above their floors\n", r.verdicts.size());
    return out;
  }
  out += fmt::format("NOT QUALIFIED: {} of {} figures below their floors:\n", failures, r.verdicts.size());
  for (const Verdict& v : r.verdicts) {
    if (v.passed) continue;
    out += fmt::format("  {} {}: {} < {} ({})\n", qualify::to_string(v.measurement.probe),
                       v.measurement.subject, value_text(v.measurement.probe, v.measurement.value),
                       value_text(v.measurement.probe, v.floor), v.floor_source);
  }
  return out;
}

nlohmann::ordered_json qualify_json(const qualify::QualifyResult& r, const qualify::FloorSpec& floors) {
  nlohmann::ordered_json figures = nlohmann::ordered_json::array();
  for (const Verdict& v : r.verdicts) {
    nlohmann::ordered_json f = qualify::to_json(v.measurement);
    f["floor"] = v.floor;
    f["floor_source"] = v.floor_source;
    f["passed"] = v.passed;
    figures.push_back(std::move(f));
  }
  nlohmann::ordered_json absolute = nlohmann::ordered_json::object();
  for (const auto& [probe, value] : floors.absolute) absolute[qualify::to_string(probe)] = value;
  nlohmann::ordered_json nominal = nlohmann::ordered_json::object();  // per probe: the floor and its source
  for (const auto& [probe, value] : floors.nominal)
    nominal[qualify::to_string(probe)] = {{"floor", value}, {"source", floors.nominal_source.at(probe)}};
  return {
      {"schema", "zeppelin-bench/qualify/1"},
      {"scenario", r.scenario},
      {"backend", r.backend},
      {"source", "measured"},
      {"launch", r.launch},
      {"world_size", r.world_size},
      {"links_measured", r.links_measured},
      {"passed", r.failures() == 0},
      {"failures", r.failures()},
      {"floors",
       {{"relative_to_median", floors.relative},
        {"file", floors.file.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(floors.file)},
        {"absolute", absolute},
        {"nominal", nominal},
        {"max_latency_seconds", floors.max_latency ? nlohmann::ordered_json(*floors.max_latency)
                                                   : nlohmann::ordered_json(nullptr)}}},
      {"figures", figures},
      {"notes", r.notes},
      {"host", host_facts_to_json(read_host_facts())}};
}

std::string qualify_html(const qualify::QualifyResult& r) {
  const int failures = r.failures();
  std::string html = fmt::format(
      "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>qualify {0}</title><style>"
      "body{{font:14px system-ui,sans-serif;margin:2em;color:#222}}table{{border-collapse:collapse}}"
      "td,th{{padding:3px 10px;border-bottom:1px solid #ddd;text-align:left}}td.num{{text-align:right}}"
      "tr.fail td{{background:#fde2e1}}.verdict{{font-size:1.3em;font-weight:600}}</style></head><body>"
      "<h1>qualify {0}</h1><p>backend {1} (measured), {2}, {3} processes</p><p class=\"verdict\">{4}</p>",
      html_escape(r.scenario), html_escape(r.backend), html_escape(r.launch), r.world_size,
      failures == 0
          ? fmt::format("Qualified: all {} figures at or above their floors", r.verdicts.size())
          : fmt::format("Not qualified: {} of {} figures below their floors", failures, r.verdicts.size()));
  html +=
      "<table><thead><tr><th>probe</th><th>subject</th><th>shape</th><th>value</th><th>latency</"
      "th><th>floor</th>"
      "<th>floor from</th><th>verdict</th></tr></thead><tbody>";
  for (const Verdict& v : r.verdicts) {
    const qualify::Measurement& m = v.measurement;
    html += fmt::format(
        "<tr{}><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
        "class=\"num\">{}</td>"
        "<td>{}</td><td>{}</td></tr>",
        v.passed ? "" : " class=\"fail\"", qualify::to_string(m.probe), html_escape(m.subject),
        html_escape(m.shape), value_text(m.probe, m.value), latency_text(m.latency),
        v.floor > 0 ? value_text(m.probe, v.floor) : "–", html_escape(v.floor_source),
        v.passed ? "ok" : "below floor");
  }
  html += "</tbody></table>";
  for (const std::string& note : r.notes) html += "<p class=\"note\">" + html_escape(note) + "</p>";
  return html + "</body></html>\n";
}

void write_qualify_reports(const qualify::QualifyResult& r, const qualify::FloorSpec& floors,
                           const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw Error(ExitCode::runtime, Location{}, "cannot create " + dir.string() + ": " + ec.message(),
                "choose another --out");
  write_atomically(dir / "qualify.json", qualify_json(r, floors).dump(2) + "\n");
  write_atomically(dir / "qualify.html", qualify_html(r));
}

}  // namespace zb::reports
