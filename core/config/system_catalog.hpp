#pragma once
// The systems (strategies) a scenario can name in "systems", with their options, types and defaults.
// The loader validates system entries against this catalog and fills in defaults, so each strategy reads
// a complete options object; `zeppelin-bench list systems` prints it and reports read `baseline` from it.
//
// The catalog is a registry: each strategy file registers its own SystemInfo (through
// core/strategies/registration.hpp), so a new strategy is one file and config never depends on
// strategies. The schema types live here because the loader needs them. The catalog is filled during
// static initialisation and immutable from the first read on (register_system aborts after that), so it
// is no mutable configuration: every read in a process sees the same, complete, ordered list.
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zb {

enum class OptionType {
  boolean,
  choice,               // one of `choices`
  positive_int_or_auto  // an integer ≥ 1, the string "auto", or one of `choices` (further keywords)
};

struct SystemOption {
  std::string name;
  OptionType type = OptionType::boolean;
  nlohmann::json default_value;
  std::vector<std::string> choices;  // choice: the values; positive_int_or_auto: keywords besides "auto"
  std::string description;
};

// What the loader knows of the rest of the scenario when it reads the systems. A field is nullopt when
// its section was itself invalid, so a hook skips the checks that need it (no follow-on errors).
struct SystemCheckContext {
  SystemCheckContext() = default;
  // What hooks were given before the model's facts: SystemCheckContext{world_size}.
  explicit SystemCheckContext(std::optional<int> world) : world_size(world) {}

  std::optional<int> world_size;  // nodes × gpus_per_node (÷ the tensor-parallel width)
  // The model's query and K/V heads and the node's GPUs (a head-parallel degree must suit them), and the
  // tensor-parallel width (1 without).
  std::optional<int> heads;
  std::optional<int> kv_heads;
  std::optional<int> gpus_per_node;
  int tensor = 1;
};

// One problem a strategy's validation hook found. `option` is the option it concerns ("" = the entry).
struct OptionProblem {
  std::string option;
  std::string what;
  std::string hint;
};

// A strategy's checks that an option type cannot express, e.g. "degree must divide the world size".
// Called with every option present, type-checked and defaulted; returns the problems (empty = fine).
using ValidateOptions = std::function<std::vector<OptionProblem>(const nlohmann::json& options,
                                                                 const SystemCheckContext& context)>;

// A strategy's own default label for complete options, where "name[option=value,...]" would hide what
// runs (zeppelin with best_of is a selector over other strategies' layouts and must say so). Empty hook:
// the generic label.
using LabelOptions = std::function<std::string(const nlohmann::json& options)>;

struct SystemInfo {
  std::string name;
  std::string description;
  int order = 0;          // listing position, lowest first (zeppelin 0, then the baselines); ties by name
  bool baseline = false;  // reports measure speed-ups against baselines
  std::vector<SystemOption> options;
  ValidateOptions validate;  // may be empty
  LabelOptions label;        // may be empty

  [[nodiscard]] const SystemOption* find_option(std::string_view option_name) const;
  [[nodiscard]] nlohmann::json default_options() const;  // every option at its default
  // `options` (possibly partial) over the defaults; keys that are no option are kept as they are.
  [[nodiscard]] nlohmann::json with_defaults(const nlohmann::json& options) const;
  // The validation hook's problems for complete, type-checked `options`; none without a hook.
  [[nodiscard]] std::vector<OptionProblem> check(const nlohmann::json& options,
                                                 const SystemCheckContext& context) const;
};

// Adds a system to the catalog, keeping it sorted by (order, name). Only for static initialisation,
// by StrategyRegistration; aborts with a message on a duplicate name or once the catalog has been read.
void register_system(SystemInfo info);

// Every registered system, in listing order. Immutable from the first call on.
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
