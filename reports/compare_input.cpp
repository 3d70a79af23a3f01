#include "reports/compare_input.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "core/common/error.hpp"
#include "reports/json_report.hpp"

namespace zb::reports::compare_input {
namespace {

// Schema 1 reports (before the `run` section) still compare, unpaired: CI caches keep old baselines.
constexpr int oldest_compared_schema_version = 1;

constexpr const char* written_by_run = "pass the report.json written by `zeppelin-bench run`";

[[noreturn]] void bad_report(const std::string& file, const std::string& json_path, const std::string& what,
                             const std::string& hint = {}) {
  Location where;
  where.file = file;
  where.json_path = json_path;
  throw_input_error(where, what, hint);
}

const nlohmann::json* member(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  const auto found = object.find(key);
  return found == object.end() ? nullptr : &*found;
}

// The `run` section of a schema-2 report, or null.
const nlohmann::json* run_section(const nlohmann::json& report) {
  const nlohmann::json* run = member(report, "run");
  return run != nullptr && run->is_object() ? run : nullptr;
}

void check_number_array(const nlohmann::json& value, const std::string& file, const std::string& where) {
  if (!value.is_array()) bad_report(file, where, "not an array of numbers");
  for (const auto& element : value) {
    if (!element.is_number()) bad_report(file, where, "not an array of numbers");
  }
}

void check_system_shape(const nlohmann::json& system, const std::string& file, const std::string& where,
                        MetricTable metrics) {
  if (!system.is_object() || !system.contains("label") || !system["label"].is_string()) {
    bad_report(file, where + ".label", "missing or not a string");
  }
  if (!system.contains("samples") || !system["samples"].is_object()) {
    bad_report(file, where + ".samples", "missing or not an object");
  }
  for (const MetricInfo* metric : compared_metrics(metrics)) {
    // An older or partial report may lack a metric: it is compared as absent.
    const std::string key(metric->name);
    if (const nlohmann::json* samples = member(system["samples"], key.c_str())) {
      check_number_array(*samples, file, where + ".samples." + key);
    }
  }
  // Counts `run` can write: an int each, and no more fitted than ran (2^63 - 1 iterations once passed and
  // wrapped around into the out-of-memory shares).
  for (const char* count : {"iterations", "feasible_iterations"}) {
    const nlohmann::json* value = member(system, count);
    if (value == nullptr) continue;
    if (!value->is_number_unsigned())
      bad_report(file, where + "." + count, "not a whole number of iterations");
    if (value->get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) {
      bad_report(file, where + "." + count,
                 fmt::format("{} iterations is more than a run can have (at most {})",
                             value->get<std::uint64_t>(), std::numeric_limits<int>::max()),
                 written_by_run);
    }
  }
  const nlohmann::json* ran = member(system, "iterations");
  const nlohmann::json* fitted = member(system, "feasible_iterations");
  if (ran != nullptr && fitted != nullptr && fitted->get<std::uint64_t>() > ran->get<std::uint64_t>()) {
    bad_report(file, where + ".feasible_iterations",
               fmt::format("{} iterations fitted of {} that ran", fitted->get<std::uint64_t>(),
                           ran->get<std::uint64_t>()),
               written_by_run);
  }
  if (const nlohmann::json* per_iteration = member(system, "per_iteration")) {
    if (!per_iteration->is_array()) bad_report(file, where + ".per_iteration", "not an array");
  }
}

}  // namespace

std::vector<const MetricInfo*> compared_metrics(MetricTable metrics) {
  std::vector<const MetricInfo*> out;
  for (const MetricInfo& m : metrics) {
    if (m.compared) out.push_back(&m);
  }
  return out;
}

void check_report_shape(const nlohmann::json& report, const std::string& file, MetricTable metrics) {
  if (!report.is_object())
    bad_report(file, "", "not a zeppelin-bench report (the top level is not an object)");
  const nlohmann::json* version = member(report, "schema_version");
  if (version == nullptr || !version->is_number_integer()) {
    bad_report(file, "schema_version", "not a zeppelin-bench report (no integer schema_version)",
               written_by_run);
  }
  const std::int64_t number = version->get<std::int64_t>();  // not int: 2^32 + 2 would read as 2
  if (number < oldest_compared_schema_version || number > report_schema_version) {
    bad_report(file, "schema_version",
               fmt::format("schema_version {} is not supported (this build reads {} to {})", number,
                           oldest_compared_schema_version, report_schema_version),
               "compare reports written by the same major version of zeppelin-bench");
  }
  const nlohmann::json* systems = member(report, "systems");
  if (systems == nullptr || !systems->is_array()) bad_report(file, "systems", "missing or not an array");
  for (std::size_t i = 0; i < systems->size(); ++i)
    check_system_shape((*systems)[i], file, fmt::format("systems[{}]", i), metrics);
}

std::string backend_of(const nlohmann::json& report) {
  for (const nlohmann::json* section : {run_section(report), member(report, "context")}) {
    if (section == nullptr) continue;
    const nlohmann::json* backend = member(*section, "backend");
    if (backend != nullptr && backend->is_string()) return backend->get<std::string>();
  }
  return "";
}

bool simulated(const nlohmann::json& report) {
  for (const nlohmann::json* section : {run_section(report), member(report, "context")}) {
    if (section == nullptr) continue;
    const nlohmann::json* flag = member(*section, "simulated");
    if (flag != nullptr && flag->is_boolean()) return flag->get<bool>();
  }
  return false;
}

std::string scenario_name(const nlohmann::json& report) {
  const nlohmann::json* scenario = member(report, "scenario");
  const nlohmann::json* name = scenario != nullptr ? member(*scenario, "name") : nullptr;
  return name != nullptr && name->is_string() ? name->get<std::string>() : "";
}

std::optional<std::uint64_t> effective_seed(const nlohmann::json& report) {
  const nlohmann::json* run = run_section(report);
  const nlohmann::json* seed = run != nullptr ? member(*run, "seed") : nullptr;
  if (seed == nullptr || !seed->is_number_unsigned()) return std::nullopt;
  return seed->get<std::uint64_t>();
}

const nlohmann::json* effective_scenario(const nlohmann::json& report) {
  const nlohmann::json* run = run_section(report);
  const nlohmann::json* scenario = run != nullptr ? member(*run, "effective_scenario") : nullptr;
  return scenario != nullptr && scenario->is_object() ? scenario : nullptr;
}

std::vector<std::string> batch_fingerprints(const nlohmann::json& report) {
  std::vector<std::string> out;
  const nlohmann::json* workload = member(report, "workload");
  const nlohmann::json* batches = workload != nullptr ? member(*workload, "batches") : nullptr;
  if (batches == nullptr || !batches->is_array()) return out;
  for (const auto& batch : *batches) {
    const nlohmann::json* fingerprint = member(batch, "lengths_fnv1a");
    if (fingerprint == nullptr || !fingerprint->is_string()) return {};  // one unknown batch: none is known
    out.push_back(fingerprint->get<std::string>());
  }
  return out;
}

const nlohmann::json* find_system(const nlohmann::json& report, const std::string& label) {
  for (const auto& system : report["systems"]) {
    if (system["label"].get<std::string>() == label) return &system;
  }
  return nullptr;
}

std::string labels_of(const nlohmann::json& report) {
  std::string out;
  for (const auto& system : report["systems"]) {
    if (!out.empty()) out += ", ";
    out += "\"" + system["label"].get<std::string>() + "\"";
  }
  return out.empty() ? "none" : out;
}

std::vector<double> samples_of(const nlohmann::json& system, const std::string& key) {
  std::vector<double> out;
  if (const nlohmann::json* samples = member(system["samples"], key.c_str())) {
    for (const auto& value : *samples) out.push_back(value.get<double>());
  }
  return out;
}

int iterations_of(const nlohmann::json& system) {
  const nlohmann::json* iterations = member(system, "iterations");
  return iterations != nullptr ? iterations->get<int>() : 0;
}

int oom_iterations_of(const nlohmann::json& system) {
  const nlohmann::json* feasible = member(system, "feasible_iterations");
  return feasible != nullptr ? iterations_of(system) - feasible->get<int>() : 0;
}

std::vector<IterationValue> per_iteration_values(const nlohmann::json& system, const std::string& key) {
  std::vector<IterationValue> out;
  const nlohmann::json* per_iteration = member(system, "per_iteration");
  if (per_iteration == nullptr) return out;
  for (const auto& entry : *per_iteration) {
    const nlohmann::json* index = member(entry, "iteration");
    const nlohmann::json* metrics = member(entry, "metrics");
    // A name with '/' is nested in report.json (`iteration_parts/optimizer_seconds`), as the JSON report
    // writes every figure of the metric table.
    const nlohmann::json* value = metrics;
    for (std::size_t begin = 0; value != nullptr && begin <= key.size();) {
      const std::size_t end = std::min(key.find('/', begin), key.size());
      value = member(*value, key.substr(begin, end - begin).c_str());
      begin = end + 1;
    }
    if (index == nullptr || !index->is_number_integer() || value == nullptr || !value->is_number()) continue;
    out.push_back({index->get<std::int64_t>(), value->get<double>()});
  }
  return out;
}

}  // namespace zb::reports::compare_input
