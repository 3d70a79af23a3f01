// The "systems" and "gates" sections: which strategies to compare, under which labels, and the pass/fail
// conditions on their results.
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "core/config/did_you_mean.hpp"
#include "core/config/known_names.hpp"
#include "core/config/scenario_sections.hpp"
#include "core/config/system_catalog.hpp"

namespace zb::sections {
namespace {

constexpr std::size_t max_label_length = 100;

std::string label_problem(const std::string& label) {
  if (label.empty()) return "must not be empty";
  if (label.size() > max_label_length) return fmt::format("is longer than {} characters", max_label_length);
  for (char c : label) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= ' ' || byte == 0x7F) return "must not contain spaces or control characters";
  }
  return {};
}

// Runs the strategy's own validation hook (the checks an option type cannot express, such as a degree
// that must divide the world size) on complete options; records its problems under the entry's path.
bool strategy_accepts(const SystemInfo& info, const nlohmann::json& options, const std::string& path,
                      LoadContext& context, const SystemCheckContext& facts) {
  const std::vector<OptionProblem> problems = info.check(options, facts);
  for (const OptionProblem& problem : problems) {
    context.add(problem.option.empty() ? path : child_path(path, problem.option), problem.what, problem.hint);
  }
  return problems.empty();
}

// Reads one entry of "systems": a bare name, or an object with "name", an optional "label" and options.
std::optional<SystemSpec> read_system(const nlohmann::json& entry, const std::string& path,
                                      LoadContext& context, const SystemCheckContext& facts) {
  const std::string name_path = entry.is_object() ? child_path(path, "name") : path;
  const nlohmann::json* name_json =
      entry.is_object() ? (entry.contains("name") ? &entry["name"] : nullptr) : &entry;
  if (name_json == nullptr) {
    context.add(name_path, "missing required key",
                "every system object names its strategy: {\"name\": \"zeppelin\"}");
    return std::nullopt;
  }
  if (!name_json->is_string()) {
    context.add(name_path, "expected a system name (a string) or an object with \"name\", got " +
                               describe_json(*name_json));
    return std::nullopt;
  }
  const std::string name = name_json->get<std::string>();
  const SystemInfo* info = find_system(name);
  if (info == nullptr) {
    const std::vector<std::string> names = system_names();
    std::vector<std::string_view> views(names.begin(), names.end());
    // An empty catalog means the binary lacks the strategies' registrations, not that the name is wrong.
    context.add(name_path,
                fmt::format("unknown system \"{}\"; the systems are {}", printable(name), quoted_list(views)),
                names.empty() ? "no strategy is registered in this program: link it with zb_strategies"
                              : did_you_mean(name, names));
    return std::nullopt;
  }

  SystemSpec spec{name, name, info->default_options()};
  // A bare name runs at the defaults, which the strategy's hook may still reject (e.g. for this world).
  if (!entry.is_object()) {
    if (!strategy_accepts(*info, spec.options, path, context, facts)) return std::nullopt;
    return spec;
  }

  std::vector<std::string_view> allowed{"name", "label"};
  for (const SystemOption& option : info->options) allowed.push_back(option.name);
  const ObjectReader reader(entry, path, context, allowed);
  bool options_ok = true;
  for (const SystemOption& option : info->options) {
    const nlohmann::json* value = reader.get(option.name);
    if (value == nullptr) continue;
    if (std::string problem = check_option_value(option, *value); !problem.empty()) {
      context.add(reader.path_of(option.name), fmt::format("{}, got {}", problem, describe_json(*value)),
                  "default: " + format_option_value(option.default_value));
      options_ok = false;
      continue;
    }
    spec.options[option.name] = *value;
  }
  if (!strategy_accepts(*info, spec.options, path, context, facts)) options_ok = false;
  spec.label = default_label(*info, spec.options);
  if (auto label = reader.string("label")) {
    if (std::string problem = label_problem(*label); !problem.empty()) {
      context.add(reader.path_of("label"), problem);
    } else {
      spec.label = *label;
    }
  }
  if (!options_ok) return std::nullopt;
  return spec;
}

std::string labels_list(const std::vector<std::string>& labels) {
  std::vector<std::string_view> views(labels.begin(), labels.end());
  return quoted_list(views);
}

// "best" stands for the run's best baseline, so it needs a baseline to choose from and must not be
// mistaken for a system labelled "best". Returns the problem and its hint, or an empty problem.
std::pair<std::string, std::string> best_baseline_problem(const std::vector<SystemSpec>& systems) {
  std::vector<std::string> baselines;
  for (const SystemInfo& info : system_catalog()) {
    if (info.baseline) baselines.push_back(info.name);
  }
  bool any_baseline = false;
  for (const SystemSpec& system : systems) {
    if (system.label == best_baseline_keyword) {
      return {"\"best\" means the best baseline, but a system is labelled \"best\" too",
              "give that system another \"label\", or name a baseline's label here"};
    }
    const SystemInfo* info = find_system(system.name);
    any_baseline = any_baseline || (info != nullptr && info->baseline);
  }
  if (any_baseline) return {};
  return {"\"best\" means the fastest baseline, but \"systems\" has no baseline",
          "add a baseline system: " + labels_list(baselines)};
}

}  // namespace

std::vector<SystemSpec> read_systems(const ObjectReader& root, const SystemCheckContext& facts, bool& ok) {
  LoadContext& context = root.context();
  const std::size_t problems_before = context.problems.size();
  std::vector<SystemSpec> systems;
  ok = false;
  if (!root.require("systems", "for example [\"zeppelin\", \"ring-cp\"]")) return systems;
  const nlohmann::json* list = root.array("systems");
  if (list == nullptr) return systems;
  if (list->empty()) context.add(root.path_of("systems"), "must name at least one system");

  std::vector<std::string> paths;  // for "already used by systems[i]"
  for (std::size_t i = 0; i < list->size(); ++i) {
    const std::string path = index_path(root.path_of("systems"), i);
    std::optional<SystemSpec> spec = read_system((*list)[i], path, context, facts);
    if (!spec) continue;
    const auto same = std::find_if(systems.begin(), systems.end(),
                                   [&](const SystemSpec& other) { return other.label == spec->label; });
    if (same != systems.end()) {
      const std::size_t first = static_cast<std::size_t>(same - systems.begin());
      context.add(path, fmt::format("label \"{}\" is already used by {}", spec->label, paths[first]),
                  "labels name systems in reports and on the command line; give one of them a \"label\"");
      continue;
    }
    systems.push_back(std::move(*spec));
    paths.push_back(path);
  }
  ok = context.problems.size() == problems_before;
  return systems;
}

std::vector<GateSpec> read_gates(const ObjectReader& root, const std::vector<SystemSpec>& systems,
                                 bool check_labels) {
  LoadContext& context = root.context();
  std::vector<std::string> labels;
  for (const SystemSpec& system : systems) labels.push_back(system.label);
  std::vector<GateSpec> gates;
  const nlohmann::json* list = root.array("gates");
  if (list == nullptr) return gates;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const ObjectReader gate((*list)[i], index_path(root.path_of("gates"), i), context,
                            {"metric", "system", "baseline", "min", "max"});
    if (!gate.valid()) continue;
    GateSpec spec;
    if (gate.require("metric", "one of " + quoted_list(known_gate_metrics))) {
      if (auto metric = gate.choice("metric", known_gate_metrics)) spec.metric = *metric;
    }
    auto check_label = [&](std::string_view key, std::string& out) {
      auto label = gate.non_empty_string(key);
      if (!label) return;
      out = *label;
      if (key == "baseline" && *label == best_baseline_keyword) {
        const auto [problem, hint] = best_baseline_problem(systems);
        if (check_labels && !problem.empty()) context.add(gate.path_of(key), problem, hint);
        return;
      }
      if (check_labels && std::find(labels.begin(), labels.end(), *label) == labels.end()) {
        context.add(gate.path_of(key),
                    fmt::format("\"{}\" is not the label of a system in \"systems\"; the labels are {}",
                                printable(*label), labels_list(labels)),
                    did_you_mean(*label, labels));
      }
    };
    if (gate.require("system", "the label of the system the gate judges")) check_label("system", spec.system);
    const bool relative = gate_metric_needs_baseline(spec.metric);
    if (relative &&
        gate.require("baseline", "speedup is measured against a baseline system's label, or \"best\"")) {
      check_label("baseline", spec.baseline);
      if (!spec.baseline.empty() && spec.baseline == spec.system) {
        context.add(gate.path_of("baseline"), "the baseline is the system itself",
                    "compare against another system");
      }
    } else if (!relative && !spec.metric.empty() && gate.has("baseline")) {
      context.add(gate.path_of("baseline"),
                  fmt::format("\"{}\" is an absolute metric and takes no baseline", spec.metric),
                  "only \"speedup\" compares two systems");
    }
    spec.min = gate.number("min", -1e300, 1e300);
    spec.max = gate.number("max", -1e300, 1e300);
    if (!gate.has("min") && !gate.has("max")) {
      context.add(gate.path(), "a gate needs \"min\", \"max\" or both");
    } else if (spec.min && spec.max && *spec.min > *spec.max) {
      context.add(gate.path_of("min"),
                  fmt::format("min ({}) is greater than max ({})", *spec.min, *spec.max));
    }
    gates.push_back(std::move(spec));
  }
  return gates;
}

}  // namespace zb::sections
