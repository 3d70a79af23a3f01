#include "core/config/system_catalog.hpp"

namespace zb {
namespace {

std::vector<SystemInfo> build_catalog() {
  std::vector<SystemInfo> catalog;
  catalog.push_back(SystemInfo{
      "zeppelin",
      "Zeppelin: hierarchical sequence partitioning, NIC routing layer, token remapping (EuroSys 2026)",
      {
          SystemOption{"routing",
                       OptionType::boolean,
                       true,
                       {},
                       "spread inter-node transfers over every NIC of the node through proxy GPUs"},
          SystemOption{"remap",
                       OptionType::boolean,
                       true,
                       {},
                       "move tokens to a token-balanced layout for the linear modules"},
          SystemOption{"partitioning",
                       OptionType::choice,
                       "hierarchical",
                       {"hierarchical", "flat"},
                       "hierarchical: local / intra-node / inter-node classes; flat: one level (ablation)"},
      }});
  catalog.push_back(
      SystemInfo{"ring-cp",
                 "Ring context parallelism over all GPUs (TransformerEngine-style P2P, per-document zigzag)",
                 {}});
  catalog.push_back(SystemInfo{
      "uniform-cp",
      "Uniform context parallelism: fixed degree C, N/C data-parallel groups, packs dealt round-robin",
      {
          SystemOption{"degree",
                       OptionType::positive_int_or_auto,
                       "auto",
                       {},
                       "CP degree C; must divide the world size; auto = the best feasible C"},
      }});
  return catalog;
}

}  // namespace

const SystemOption* SystemInfo::find_option(std::string_view option_name) const {
  for (const SystemOption& option : options) {
    if (option.name == option_name) return &option;
  }
  return nullptr;
}

nlohmann::json SystemInfo::default_options() const {
  nlohmann::json out = nlohmann::json::object();
  for (const SystemOption& option : options) out[option.name] = option.default_value;
  return out;
}

const std::vector<SystemInfo>& system_catalog() {
  static const std::vector<SystemInfo> catalog = build_catalog();
  return catalog;
}

const SystemInfo* find_system(std::string_view name) {
  for (const SystemInfo& system : system_catalog()) {
    if (system.name == name) return &system;
  }
  return nullptr;
}

std::vector<std::string> system_names() {
  std::vector<std::string> names;
  for (const SystemInfo& system : system_catalog()) names.push_back(system.name);
  return names;
}

std::string describe_option_type(const SystemOption& option) {
  switch (option.type) {
    case OptionType::boolean:
      return "bool";
    case OptionType::positive_int_or_auto:
      return "int >= 1 or \"auto\"";
    case OptionType::choice: {
      std::string out;
      for (const std::string& choice : option.choices) {
        if (!out.empty()) out += " | ";
        out += "\"" + choice + "\"";
      }
      return out;
    }
  }
  return "?";
}

std::string check_option_value(const SystemOption& option, const nlohmann::json& value) {
  switch (option.type) {
    case OptionType::boolean:
      return value.is_boolean() ? "" : "expected true or false";
    case OptionType::positive_int_or_auto:
      if (value.is_string() && value.get<std::string>() == "auto") return "";
      if (value.is_number_integer()) {
        // Parsed non-negative numbers are stored unsigned, literals in code signed: accept both.
        const bool in_range = value.is_number_unsigned()
                                  ? value.get<std::uint64_t>() >= 1 && value.get<std::uint64_t>() <= 1'000'000
                                  : value.get<std::int64_t>() >= 1 && value.get<std::int64_t>() <= 1'000'000;
        if (in_range) return "";
      }
      return "expected an integer >= 1 (at most 1000000) or \"auto\"";
    case OptionType::choice:
      if (value.is_string()) {
        for (const std::string& choice : option.choices) {
          if (value.get<std::string>() == choice) return "";
        }
      }
      return "expected one of " + describe_option_type(option);
  }
  return "unsupported option type";
}

std::string format_option_value(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  return value.dump();
}

std::string default_label(const SystemInfo& system, const nlohmann::json& options) {
  std::string changed;
  for (const SystemOption& option : system.options) {
    if (!options.is_object() || !options.contains(option.name)) continue;
    const nlohmann::json& value = options.at(option.name);
    if (value == option.default_value) continue;
    if (!changed.empty()) changed += ',';
    changed += option.name + "=" + format_option_value(value);
  }
  return changed.empty() ? system.name : system.name + "[" + changed + "]";
}

}  // namespace zb
