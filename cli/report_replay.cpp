#include "cli/report_replay.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "core/common/error.hpp"
#include "core/config/hardware_profile.hpp"
#include "reports/json_report.hpp"

namespace zb::cli {
namespace {

[[noreturn]] void refuse(const std::string& file, const std::string& path, const std::string& what,
                         const std::string& hint) {
  throw Error(ExitCode::bad_input, Location{file, path, 0, 0, -1}, what, hint);
}

const nlohmann::json& member(const nlohmann::json& object, const char* key, const std::string& file,
                             const std::string& path) {
  if (!object.is_object() || !object.contains(key))
    refuse(file, path + "/" + key, std::string("no \"") + key + "\" in the report",
           "give a report.json written by `zeppelin-bench run` (schema 2)");
  return object.at(key);
}

// The profile's values as the report writes them (every number, flags as 1 or 0) in the form a scenario's
// inline "hardware_profile" takes (flags as true or false), read from the defaults' own JSON types.
nlohmann::json inline_profile(const nlohmann::json& values, const std::string& file) {
  if (!values.is_object())
    refuse(file, "/run/hardware_profile/values", "the hardware profile's values are not an object",
           "give a report.json written by `zeppelin-bench run` (schema 2)");
  const nlohmann::json defaults = HardwareProfile{}.to_json();
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, value] : values.items()) {
    const bool flag = defaults.contains(key) && defaults.at(key).is_boolean();
    out[key] = flag && value.is_number() ? nlohmann::json(value.get<double>() != 0) : value;
  }
  return out;
}

using ojson = nlohmann::ordered_json;  // the report's own type, as reports::without_volatile_fields takes it

std::string shown(const ojson& value) {
  std::string text = value.dump();
  return text.size() > 80 ? text.substr(0, 77) + "..." : text;
}

// The first place, in document order, where `a` and `b` differ; "" when they are equal.
std::string first_difference(const ojson& a, const ojson& b, const std::string& path) {
  if (a.type() != b.type() && !(a.is_number() && b.is_number()))
    return fmt::format("{}: {} in the report, {} replayed", path, shown(a), shown(b));
  if (a.is_object()) {
    for (const auto& [key, value] : a.items()) {
      if (!b.contains(key)) return fmt::format("{}/{}: in the report, not replayed", path, key);
      if (std::string d = first_difference(value, b.at(key), path + "/" + key); !d.empty()) return d;
    }
    for (const auto& [key, value] : b.items())
      if (!a.contains(key)) return fmt::format("{}/{}: replayed, not in the report", path, key);
    return "";
  }
  if (a.is_array()) {
    if (a.size() != b.size())
      return fmt::format("{}: {} entries in the report, {} replayed", path, a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i)
      if (std::string d = first_difference(a[i], b[i], fmt::format("{}/{}", path, i)); !d.empty()) return d;
    return "";
  }
  return a == b ? "" : fmt::format("{}: {} in the report, {} replayed", path, shown(a), shown(b));
}

}  // namespace

ReplayInput replay_input(const nlohmann::json& report, const std::string& file) {
  if (!report.is_object() || report.value("schema_version", 0) != 2)
    refuse(file, "/schema_version",
           "not a report this version can replay (schema_version " +
               (report.is_object() && report.contains("schema_version") ? report["schema_version"].dump()
                                                                        : std::string("missing")) +
               ", expected 2)",
           "a schema 1 report does not record the scenario that ran: run the scenario anew");
  const nlohmann::json& run = member(report, "run", file, "");
  const std::string backend = run.value("backend", std::string("?"));
  if (!run.value("simulated", false))
    refuse(file, "/run/simulated",
           "the run was measured on the " + backend +
               " backend: its figures came from hardware, not from a seed, and cannot be replayed "
               "(report.json keeps them; the traces were not kept)",
           "rerun the scenario with `zeppelin-bench run` to get its HTML and traces");
  ReplayInput out;
  out.scenario = member(run, "effective_scenario", file, "/run");
  if (!out.scenario.is_object())
    refuse(file, "/run/effective_scenario", "the effective scenario is not an object",
           "give a report.json written by `zeppelin-bench run` (schema 2)");
  const nlohmann::json& profile = member(run, "hardware_profile", file, "/run");
  out.scenario["hardware_profile"] =
      inline_profile(member(profile, "values", file, "/run/hardware_profile"), file);
  if (out.scenario.contains("output") && out.scenario["output"].is_object())
    out.scenario["output"].erase("dir");

  // A lengths file named relative to the scenario's folder: resolved as the run resolved it, from the
  // folder it ran in, which is where `report` is expected to run too.
  const std::filesystem::path scenario_file =
      report.contains("provenance") && report["provenance"].is_object()
          ? std::filesystem::path(report["provenance"].value("scenario_file", std::string()))
          : std::filesystem::path();
  if (nlohmann::json* workload = out.scenario.contains("workload") ? &out.scenario["workload"] : nullptr;
      workload != nullptr && workload->is_object() && workload->contains("lengths_file") &&
      (*workload)["lengths_file"].is_string()) {
    const std::filesystem::path lengths = (*workload)["lengths_file"].get<std::string>();
    if (lengths.is_relative())
      (*workload)["lengths_file"] =
          std::filesystem::absolute(scenario_file.parent_path() / lengths).lexically_normal().string();
  }

  if (run.contains("plan_file") && run["plan_file"].is_string()) {
    out.plan_file = run["plan_file"].get<std::string>();
    if (!std::filesystem::exists(out.plan_file))
      refuse(file, "/run/plan_file", "the run executed the plan " + out.plan_file + ", which is not there",
             "run `report` from the folder the run ran in, with the plan file in place");
  }
  return out;
}

std::string first_figure_difference(const nlohmann::json& original, const nlohmann::json& replayed) {
  const ojson a = reports::without_volatile_fields(ojson::parse(original.dump()));
  const ojson b = reports::without_volatile_fields(ojson::parse(replayed.dump()));
  for (const char* key : {"scenario", "verdict", "best_baseline", "baseline_ranking", "workload", "systems",
                          "comparisons", "gates"}) {
    const ojson left = a.contains(key) ? a[key] : ojson();
    const ojson right = b.contains(key) ? b[key] : ojson();
    if (std::string d = first_difference(left, right, std::string("/") + key); !d.empty()) return d;
  }
  return "";
}

std::string build_of(const nlohmann::json& report) {
  if (!report.is_object() || !report.contains("provenance") || !report["provenance"].is_object())
    return "an unknown build";
  const nlohmann::json& p = report["provenance"];
  std::string out =
      p.value("tool", std::string("zeppelin-bench")) + " " + p.value("tool_version", std::string("?"));
  if (p.contains("git") && p["git"].is_object()) {
    out += ", git " + p["git"].value("sha", std::string("?"));
    if (p["git"].value("dirty", false)) out += " (dirty)";
  }
  return out;
}

}  // namespace zb::cli
