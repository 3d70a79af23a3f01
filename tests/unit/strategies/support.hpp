#pragma once
// Scenario and batch builders shared by the plan and strategy tests.
#include <string>
#include <vector>

#include "core/common/rng.hpp"
#include "core/config/presets.hpp"
#include "core/config/scenario.hpp"
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

inline Batch batch_of(std::vector<std::int64_t> lengths) {
  Batch b;
  b.lengths = std::move(lengths);
  return b;
}

}  // namespace zb::test
