#include "core/config/system_catalog.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace zb {
namespace {

// The one catalog of the process. Written only by register_system during static initialisation (one
// thread, before main), read-only afterwards. `sealed` is set by the first read, so a late registration
// fails loudly instead of two reads seeing different catalogs.
struct Catalog {
  std::vector<SystemInfo> systems;
  std::atomic<bool> sealed{false};
};

// Constructed on first use: a strategy file's registration may run before this file's statics exist.
Catalog& the_catalog() {
  static Catalog catalog;
  return catalog;
}

// A registration error is a programming error found before main: no Error (nobody could catch it).
[[noreturn]] void registration_failed(const std::string& what) {
  std::fprintf(stderr, "zeppelin-bench: system catalog: %s\n", what.c_str());
  std::abort();
}

}  // namespace

void register_system(SystemInfo info) {
  Catalog& catalog = the_catalog();
  if (catalog.sealed.load()) {
    registration_failed("\"" + info.name + "\" was registered after the catalog was first read; " +
                        "register from a namespace-scope StrategyRegistration only");
  }
  for (const SystemInfo& system : catalog.systems) {
    if (system.name == info.name) registration_failed("\"" + info.name + "\" is registered twice");
  }
  // Sorted insert: static initialisation order between files is unspecified, the listing order is not.
  const auto before = [&info](const SystemInfo& system) {
    return info.order < system.order || (info.order == system.order && info.name < system.name);
  };
  const auto at = std::find_if(catalog.systems.begin(), catalog.systems.end(), before);
  catalog.systems.insert(at, std::move(info));
}

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

nlohmann::json SystemInfo::with_defaults(const nlohmann::json& given) const {
  nlohmann::json out = default_options();
  if (given.is_object()) {
    for (const auto& [key, value] : given.items()) out[key] = value;
  }
  return out;
}

std::vector<OptionProblem> SystemInfo::check(const nlohmann::json& complete,
                                             const SystemCheckContext& context) const {
  return validate ? validate(complete, context) : std::vector<OptionProblem>{};
}

const std::vector<SystemInfo>& system_catalog() {
  Catalog& catalog = the_catalog();
  catalog.sealed.store(true);
  return catalog.systems;
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
    case OptionType::positive_int_or_auto: {
      std::string out = "int >= 1 or \"auto\"";
      for (const std::string& keyword : option.choices) out += " | \"" + keyword + "\"";
      return out;
    }
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
      if (value.is_string()) {
        const std::string& word = value.get_ref<const std::string&>();
        if (word == "auto" ||
            std::find(option.choices.begin(), option.choices.end(), word) != option.choices.end())
          return "";
      }
      if (value.is_number_integer()) {
        // Parsed non-negative numbers are stored unsigned, literals in code signed: accept both.
        const bool in_range = value.is_number_unsigned()
                                  ? value.get<std::uint64_t>() >= 1 && value.get<std::uint64_t>() <= 1'000'000
                                  : value.get<std::int64_t>() >= 1 && value.get<std::int64_t>() <= 1'000'000;
        if (in_range) return "";
      }
      return "expected an integer >= 1 (at most 1000000) or " +
             describe_option_type(option).substr(std::string_view("int >= 1 or ").size());
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
  if (system.label) {
    if (std::string own = system.label(system.with_defaults(options)); !own.empty()) return own;
  }
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
