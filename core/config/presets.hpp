#pragma once
// Cluster and model presets: named starting points for the "cluster" and "model" sections of a scenario.
// The values, with the source of every figure, are in one annotated table in presets.cpp and in
// docs/SCENARIOS.md. A preset describes one node; the scenario chooses how many nodes.
#include <string>
#include <string_view>
#include <vector>

#include "core/config/scenario.hpp"

namespace zb {

struct ClusterPreset {
  std::string name;
  std::string summary;  // one line for `zeppelin-bench list clusters`
  ClusterSpec spec;     // nodes = 1, preset = name
};

struct ModelPreset {
  std::string name;
  std::string summary;  // one line for `zeppelin-bench list models`
  ModelSpec spec;       // preset = name
};

// All presets, in the order they are listed. Built once, immutable.
[[nodiscard]] const std::vector<ClusterPreset>& cluster_presets();
[[nodiscard]] const std::vector<ModelPreset>& model_presets();

// nullptr when there is no preset of that name.
[[nodiscard]] const ClusterPreset* find_cluster_preset(std::string_view name);
[[nodiscard]] const ModelPreset* find_model_preset(std::string_view name);

[[nodiscard]] std::vector<std::string> cluster_preset_names();
[[nodiscard]] std::vector<std::string> model_preset_names();

}  // namespace zb
