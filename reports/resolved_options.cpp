#include "reports/resolved_options.hpp"

#include <algorithm>
#include <vector>

#include "core/config/system_catalog.hpp"

namespace zb::reports {
namespace {

using ojson = nlohmann::ordered_json;

// A value a report can print on one line; null, objects and arrays are structure, not settings.
bool one_value(const nlohmann::json& value) {
  return value.is_primitive() && !value.is_null();
}

// The options as the system was given them: the loader has filled in every default of a scenario's
// system, and no default is added here, because a plan read from a file (`run --plan`, options
// {"plan": FILE}) was made with options nobody knows and only its own facts say. Catalog order first,
// then any other key by name.
ojson requested_options(const SystemSpec& system) {
  ojson out = ojson::object();
  if (!system.options.is_object()) return out;
  if (const SystemInfo* info = find_system(system.name)) {
    for (const SystemOption& option : info->options) {
      if (system.options.contains(option.name))
        out[option.name] = ojson::parse(system.options[option.name].dump());
    }
  }
  for (const auto& [key, value] : system.options.items()) {
    if (!out.contains(key)) out[key] = ojson::parse(value.dump());
  }
  return out;
}

// "8", "8 or 16", "9, 10 or 11", "2 or none": one value, or the distinct values an array holds (null:
// some iterations' plans do not record it).
std::string values_text(const ojson& value) {
  auto one = [](const ojson& v) {
    return v.is_null() ? std::string("none") : format_option_value(nlohmann::json::parse(v.dump()));
  };
  if (!value.is_array()) return one(value);
  std::string out;
  for (std::size_t i = 0; i < value.size(); ++i) {
    if (i > 0) out += i + 1 == value.size() ? " or " : ", ";
    out += one(value[i]);
  }
  return out;
}

std::string spaced(std::string key) {
  std::replace(key.begin(), key.end(), '_', ' ');
  return key;
}

}  // namespace

ojson iteration_resolved_options(const SystemSpec& system, const nlohmann::json& plan_info) {
  ojson out = requested_options(system);
  if (!plan_info.is_object()) return out;
  // Options the plan resolved keep their position; options only the plan names (a plan read from a
  // file) follow in catalog order, then the plan's other facts by name (plan::Plan::info is an
  // ordered-by-name object).
  for (auto& [key, value] : out.items()) {
    if (plan_info.contains(key) && one_value(plan_info[key])) value = ojson::parse(plan_info[key].dump());
  }
  if (const SystemInfo* info = find_system(system.name)) {
    for (const SystemOption& option : info->options) {
      if (!out.contains(option.name) && plan_info.contains(option.name) &&
          one_value(plan_info[option.name])) {
        out[option.name] = ojson::parse(plan_info[option.name].dump());
      }
    }
  }
  for (const auto& [key, value] : plan_info.items()) {
    if (!out.contains(key) && one_value(value)) out[key] = ojson::parse(value.dump());
  }
  return out;
}

ojson system_resolved_options(const SystemResult& result) {
  const bool any_feasible = std::any_of(result.iterations.begin(), result.iterations.end(),
                                        [](const IterationResult& it) { return it.feasible; });
  std::vector<ojson> per_iteration;
  for (const IterationResult& it : result.iterations) {
    if (it.feasible || !any_feasible)
      per_iteration.push_back(iteration_resolved_options(result.system, it.plan_info));
  }
  if (per_iteration.empty()) return iteration_resolved_options(result.system, nlohmann::json::object());
  // Keys in first-seen order. An iteration whose plan lacks a key adds null to its values: a fact that
  // only some plans record (the degree of a layout chosen in some iterations) must not read as if it
  // held for all of them.
  ojson distinct = ojson::object();
  for (const ojson& options : per_iteration) {
    for (const auto& [key, value] : options.items()) {
      if (!distinct.contains(key)) distinct[key] = ojson::array();
    }
  }
  for (const ojson& options : per_iteration) {
    for (auto& [key, values] : distinct.items()) {
      const ojson value = options.contains(key) ? options[key] : ojson();
      if (std::find(values.begin(), values.end(), value) == values.end()) values.push_back(value);
    }
  }
  ojson out = ojson::object();
  for (const auto& [key, values] : distinct.items()) out[key] = values.size() == 1 ? values.front() : values;
  return out;
}

std::string resolved_options_text(const SystemSpec& system, const ojson& resolved) {
  const ojson requested = requested_options(system);
  std::vector<std::string> folded;  // "<option>_choice" facts that repeat an annotated request
  std::string out;
  auto append = [&](const std::string& part) { out += (out.empty() ? "" : ", ") + part; };
  for (const auto& [key, value] : resolved.items()) {
    if (std::find(folded.begin(), folded.end(), key) != folded.end()) continue;
    if (!requested.contains(key)) {
      append(spaced(key) + " " + values_text(value));
      continue;
    }
    const ojson& asked = requested[key];
    if (asked == value) {
      append(key + " " + values_text(value));
      continue;
    }
    append(key + " " + values_text(value) + " (" + values_text(asked) + ")");
    const std::string choice = key + "_choice";
    if (resolved.contains(choice) && resolved[choice] == asked) folded.push_back(choice);
  }
  return out;
}

}  // namespace zb::reports
