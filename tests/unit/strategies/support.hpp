#pragma once
// Scenario and batch builders shared by the plan and strategy tests.
#include <string>
#include <vector>

#include "core/common/rng.hpp"
#include "core/config/presets.hpp"
#include "core/config/scenario.hpp"
#include "core/config/system_catalog.hpp"
#include "core/cost/cost_model.hpp"
#include "core/workload/workload.hpp"

namespace zb::test {

inline Scenario preset_scenario(const std::string& cluster, int nodes, const std::string& model) {
  Scenario s;
  s.name = "test";
  s.cluster = find_cluster_preset(cluster)->spec;
  s.cluster.nodes = nodes;
  s.model = find_model_preset(model)->spec;
  return s;
}

// A small model whose per-GPU capacity is large, so random batches are mostly feasible.
inline ModelSpec small_model() {
  ModelSpec m;
  m.layers = 2;
  m.hidden = 512;
  m.heads = 8;
  m.kv_heads = 4;
  m.ffn_hidden = 1408;
  m.vocab = 32000;
  return m;
}

inline SystemSpec system(const std::string& name, nlohmann::json options = nlohmann::json::object()) {
  SystemSpec s;
  s.name = name;
  s.label = name + (options.empty() ? "" : options.dump());
  s.options = std::move(options);
  return s;
}

// Every registered strategy at its defaults, then with one option at a time moved to each other value
// worth planning: the other boolean, every other choice, and each of `int_values` (and "auto") for
// integer options. Variants the strategy's own validation hook rejects for `world_size` are left out
// (a degree that does not divide it), so a new strategy and a new option join every test using this.
inline std::vector<SystemSpec> registered_variants(int world_size, const std::vector<int>& int_values) {
  std::vector<SystemSpec> variants;
  for (const SystemInfo& info : system_catalog()) {
    variants.push_back(system(info.name));
    for (const SystemOption& option : info.options) {
      std::vector<nlohmann::json> values;
      switch (option.type) {
        case OptionType::boolean:
          values = {true, false};
          break;
        case OptionType::choice:
          values.assign(option.choices.begin(), option.choices.end());
          break;
        case OptionType::positive_int_or_auto:
          values.push_back("auto");
          values.insert(values.end(), int_values.begin(), int_values.end());
          break;
      }
      for (const nlohmann::json& value : values) {
        if (value == option.default_value) continue;
        nlohmann::json options{{option.name, value}};
        if (!info.check(info.with_defaults(options), SystemCheckContext{world_size}).empty()) continue;
        variants.push_back(system(info.name, std::move(options)));
      }
    }
  }
  return variants;
}

inline Batch batch_of(std::vector<std::int64_t> lengths) {
  Batch b;
  b.lengths = std::move(lengths);
  return b;
}

}  // namespace zb::test
