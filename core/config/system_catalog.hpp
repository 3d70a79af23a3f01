#pragma once
// The systems (strategies) a scenario can name in "systems", with their options, types and defaults.
// The loader validates system entries against this catalog and fills in defaults, so each strategy reads
// a complete options object; `zeppelin-bench list systems` prints it. A new strategy adds one entry here.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace zb {

enum class OptionType {
  boolean,
  choice,               // one of `choices`
  positive_int_or_auto  // an integer ≥ 1, or the string "auto"
};

struct SystemOption {
  std::string name;
  OptionType type = OptionType::boolean;
  nlohmann::json default_value;
  std::vector<std::string> choices;  // for OptionType::choice
  std::string description;
};

struct SystemInfo {
  std::string name;
  std::string description;
  std::vector<SystemOption> options;

  [[nodiscard]] const SystemOption* find_option(std::string_view option_name) const;
  [[nodiscard]] nlohmann::json default_options() const;  // every option at its default
};

// Every system, in listing order. Built once, immutable.
[[nodiscard]] const std::vector<SystemInfo>& system_catalog();
[[nodiscard]] const SystemInfo* find_system(std::string_view name);  // nullptr when unknown
[[nodiscard]] std::vector<std::string> system_names();

// "" when `value` is acceptable for `option`, otherwise what was expected (e.g. `expected true or false`).
[[nodiscard]] std::string check_option_value(const SystemOption& option, const nlohmann::json& value);

// The option's type for help text: `bool`, `"hierarchical" | "flat"`, `int >= 1 or "auto"`.
[[nodiscard]] std::string describe_option_type(const SystemOption& option);

// A value as it appears in a label: true, 8, flat (strings unquoted).
[[nodiscard]] std::string format_option_value(const nlohmann::json& value);

// The default label of a system entry: its name, followed by the options that differ from their
// defaults in catalog order, e.g. `zeppelin[routing=false,remap=false]`, `uniform-cp[degree=8]`.
// `options` may be partial; missing options count as defaults.
[[nodiscard]] std::string default_label(const SystemInfo& system, const nlohmann::json& options);

}  // namespace zb
