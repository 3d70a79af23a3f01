#pragma once
// Scenario and batch builders shared by the plan and strategy tests.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/common/rng.hpp"
#include "core/config/presets.hpp"
#include "core/config/scenario.hpp"
#include "core/config/system_catalog.hpp"
#include "core/cost/cost_model.hpp"
#include "core/plan/plan.hpp"
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
// worth planning: the other boolean, every other choice, and each of `int_values` (and "auto" and the
// option's other keywords) for integer options. Variants the strategy's own validation hook rejects for
// `world_size` are left out (a degree that does not divide it), so a new strategy and a new option join every
// test using this.
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
          values.insert(values.end(), option.choices.begin(), option.choices.end());  // e.g. "per-batch"
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

// A batch of `tokens` tokens, mostly short documents with a heavy tail: each length is
// shortest·(longest/shortest)^(x^power), x uniform in [0, 1), the last one cut to what is left.
inline std::vector<std::int64_t> tailed_lengths(Rng& rng, std::int64_t tokens, double shortest,
                                                std::int64_t longest, int power) {
  std::vector<std::int64_t> lengths;
  std::int64_t total = 0;
  while (total < tokens) {
    const double x = rng.uniform();
    double e = 1;
    for (int i = 0; i < power; ++i) e *= x;
    auto len = static_cast<std::int64_t>(shortest * std::pow(static_cast<double>(longest) / shortest, e));
    len = std::max<std::int64_t>(1, std::min(len, tokens - total));
    lengths.push_back(len);
    total += len;
  }
  return lengths;
}

// A random scenario for the lowering's property tests (conformance, the NCCL order): a cluster of at
// most 16 GPUs (dgx-h200 links; 1, 2, 4 or 8 GPUs per node, half the time two GPUs per NIC), the small
// model, forward and backward, and 1–12 documents, a third of them under 64 tokens. Drawn from `rng`,
// which the caller may go on drawing from (to vary more of the scenario).
struct LoweringCase {
  Scenario scenario;
  std::vector<std::int64_t> lengths;
};

inline LoweringCase random_lowering_case(Rng& rng) {
  LoweringCase c;
  const int gpn_choices[] = {1, 2, 4, 8};
  auto& cl = c.scenario.cluster;
  cl = find_cluster_preset("dgx-h200")->spec;
  cl.gpus_per_node = gpn_choices[rng.below(4)];
  cl.nodes = 1 + static_cast<int>(rng.below(static_cast<std::uint64_t>(std::max(1, 16 / cl.gpus_per_node))));
  const bool shared_nics = cl.gpus_per_node >= 2 && rng.below(2) == 0;
  cl.nics_per_node = shared_nics ? cl.gpus_per_node / 2 : cl.gpus_per_node;
  cl.gpu_to_nic.clear();
  for (int i = 0; i < cl.gpus_per_node; ++i) cl.gpu_to_nic.push_back(shared_nics ? i / 2 : i);
  c.scenario.model = small_model();
  c.scenario.passes = Passes::fwd_bwd;
  const int n = 1 + static_cast<int>(rng.below(12));
  for (int i = 0; i < n; ++i)
    c.lengths.push_back(rng.below(3) == 0 ? 1 + static_cast<std::int64_t>(rng.below(64))
                                          : 1 + static_cast<std::int64_t>(rng.below(1ULL << 16)));
  return c;
}

// How many calls of local groups some rank runs between two attention steps of one ring (Zeppelin's
// engine filling the ring's waits).
inline int local_calls_between_ring_steps(const plan::Plan& p) {
  int filled = 0;
  for (const auto& rank : p.ranks) {
    std::map<int, int> last_step_at;  // ring group → index of its last attention step seen so far
    std::vector<int> locals;          // indices of local calls since the last ring step
    for (std::size_t i = 0; i < rank.ops.size(); ++i) {
      const plan::Op& op = rank.ops[i];
      if (op.kind != plan::OpKind::attention) continue;
      if (p.groups[static_cast<std::size_t>(op.group)].ranks.size() == 1) {
        locals.push_back(static_cast<int>(i));
      } else {
        const auto it = last_step_at.find(op.group);
        for (const int at : locals) {
          if (it != last_step_at.end() && it->second < at) ++filled;
        }
        locals.clear();
        last_step_at[op.group] = static_cast<int>(i);
      }
    }
  }
  return filled;
}

}  // namespace zb::test
