#pragma once
// Plans for the plan-format and verify tests: strategy plans on random clusters and batches, and small
// hand-made plans whose every field the test states.
#include <string>
#include <vector>

#include "core/cost/cost_model.hpp"
#include "core/plan/plan.hpp"
#include "core/strategies/strategy.hpp"
#include "tests/unit/strategies/support.hpp"

namespace zb::test {

// A random cluster shape (1–8 GPUs per node, 1–8 nodes, dedicated or shared NICs) with the small model,
// and a random batch of 1–16 documents mixing single tokens, lengths below 2P and long ones.
struct RandomScenario {
  Scenario scenario;
  std::vector<std::int64_t> lengths;
};

inline RandomScenario random_scenario(std::uint64_t seed) {
  Rng rng(seed, 29);
  RandomScenario c;
  auto& cl = c.scenario.cluster;
  cl = find_cluster_preset("dgx-h200")->spec;
  const int gpn_choices[] = {1, 2, 4, 8};
  cl.gpus_per_node = gpn_choices[rng.below(4)];
  cl.nodes = 1 + static_cast<int>(rng.below(8));
  const bool shared_nics = cl.gpus_per_node >= 2 && rng.below(2) == 0;
  cl.nics_per_node = shared_nics ? cl.gpus_per_node / 2 : cl.gpus_per_node;
  cl.gpu_to_nic.clear();
  for (int i = 0; i < cl.gpus_per_node; ++i) cl.gpu_to_nic.push_back(shared_nics ? i / 2 : i);
  c.scenario.model = small_model();
  const auto world = static_cast<std::uint64_t>(cl.world_size());
  const int n = 1 + static_cast<int>(rng.below(16));
  for (int i = 0; i < n; ++i) {
    switch (rng.below(3)) {
      case 0:
        c.lengths.push_back(1);
        break;
      case 1:
        c.lengths.push_back(1 + static_cast<std::int64_t>(rng.below(2 * world)));
        break;
      default:
        c.lengths.push_back(1 + static_cast<std::int64_t>(rng.below(1ULL << 16)));
        break;
    }
  }
  return c;
}

// Every registered strategy at its defaults, plus Zeppelin without routing and without remap (the
// direct-send and no-remap forms of its plans).
inline std::vector<SystemSpec> strategies_to_print() {
  std::vector<SystemSpec> out;
  for (const auto& name : strategy_names()) out.push_back(system(name));
  out.push_back(system("zeppelin", {{"routing", false}}));
  out.push_back(system("zeppelin", {{"remap", false}}));
  return out;
}

inline plan::Plan plan_of(const Scenario& scenario, const SystemSpec& system,
                          std::vector<std::int64_t> lengths) {
  const CostModel cost(scenario.cluster, scenario.model);
  return make_strategy(system, scenario, cost)->make_plan(batch_of(std::move(lengths)));
}

// Two GPUs of one node and one sequence of 8 tokens; each rank owns the tokens in `owned` (attention and
// linear layout alike) and has no ops: a test adds the attention and collective ops it is about.
inline plan::Plan two_rank_plan(std::vector<std::vector<plan::Shard>> owned) {
  plan::Plan p;
  p.system = p.strategy = "hand-made";
  p.world_size = 2;
  p.gpus_per_node = 2;
  p.sequences = {{0, 8, 0}};
  p.groups = {{0, plan::Level::intra_node, {0, 1}, {0}, plan::Sharding::whole, 0}};
  for (int r = 0; r < 2; ++r) {
    p.attention_layout.push_back({r, owned[static_cast<std::size_t>(r)]});
    p.linear_layout.push_back({r, owned[static_cast<std::size_t>(r)]});
    p.ranks.push_back({r, {}});
  }
  return p;
}

inline plan::Op attention(std::vector<plan::AttentionBlock> blocks, std::vector<int> deps = {}) {
  plan::Op op;
  op.kind = plan::OpKind::attention;
  op.name = "attn";
  op.blocks = std::move(blocks);
  op.deps = std::move(deps);
  return op;
}

inline plan::AttentionBlock block(std::int64_t q0, std::int64_t q1, std::int64_t k0, std::int64_t k1,
                                  plan::Mask mask, plan::HeadRange heads = {}) {
  return {0, q0, q1, k0, k1, mask, heads};
}

inline plan::Op collective(plan::CollectiveKind kind, std::vector<int> ranks, int tag,
                           std::vector<int> deps = {}) {
  plan::Op op;
  op.kind = plan::OpKind::collective;
  op.name = "kv";
  op.collective = kind;
  op.collective_ranks = std::move(ranks);
  op.tag = tag;
  op.bytes = 1024;
  op.deps = std::move(deps);
  return op;
}

// Appends `op` to `rank`'s list with the next id; returns the id.
inline int add(plan::Plan& p, int rank, plan::Op op) {
  auto& ops = p.ranks[static_cast<std::size_t>(rank)].ops;
  op.id = static_cast<int>(ops.size());
  ops.push_back(std::move(op));
  return ops.back().id;
}

inline std::string joined(const std::vector<std::string>& problems) {
  std::string s;
  for (const auto& p : problems) s += p + "\n";
  return s;
}

}  // namespace zb::test
