#pragma once
// Builders shared by the reference-executor integration tests and the MPI comparison driver: small
// clusters from presets, planning one batch with one system, and running the reference backend.
#include <string>
#include <vector>

#include "core/common/rng.hpp"
#include "core/cost/cost_model.hpp"
#include "core/exec/reference/reference_executor.hpp"
#include "core/lower/lower.hpp"
#include "core/run/execute.hpp"
#include "core/strategies/strategy.hpp"
#include "tests/unit/strategies/support.hpp"

namespace zb::test {

// `nodes` × `gpus_per_node` DGX H200-like GPUs with the small model; with shared_nics two GPUs share a
// NIC (A800-like), so routing has fewer rails than GPUs.
inline Scenario small_cluster(int nodes, int gpus_per_node, bool shared_nics, std::uint64_t seed = 1) {
  Scenario s = preset_scenario("dgx-h200", nodes, "llama-7b");
  s.model = small_model();
  s.seed = seed;
  s.passes = Passes::fwd;
  ClusterSpec& c = s.cluster;
  c.gpus_per_node = gpus_per_node;
  shared_nics = shared_nics && gpus_per_node >= 2;
  c.nics_per_node = shared_nics ? gpus_per_node / 2 : gpus_per_node;
  c.gpu_to_nic.clear();
  for (int i = 0; i < gpus_per_node; ++i) c.gpu_to_nic.push_back(shared_nics ? i / 2 : i);
  return s;
}

// Lowers `plan` as the scenario runs it (forward only unless its passes are fwd_bwd) and runs it on the
// reference executor: what zb::execute does, without linking the simulator into the tests.
inline Trace run_plan(reference::ReferenceExecutor& executor, const plan::Plan& plan,
                      const Scenario& scenario, const CostModel& cost) {
  const lower::Program program = lower::lower(plan, cost, {.backward = scenario.passes == Passes::fwd_bwd});
  return executor.run(program, exec_context(scenario, cost));
}

struct ReferenceRun {
  plan::Plan plan;
  Trace trace;
  std::vector<reference::RankResult> results;
};

// Plans `lengths` with `system` on `scenario` and runs the plan on the reference backend. Throws what
// the executor throws (zb::Error) when verification or a transfer fails. Under MPI one executor must
// serve every run of the process (it owns the transport), hence the first overload.
inline ReferenceRun run_reference(reference::ReferenceExecutor& executor, const Scenario& scenario,
                                  const SystemSpec& system, const std::vector<std::int64_t>& lengths) {
  const CostModel cost(scenario.cluster, scenario.model);
  ReferenceRun run;
  run.plan = make_strategy(system, scenario, cost)->make_plan(batch_of(lengths));
  run.trace = run_plan(executor, run.plan, scenario, cost);
  run.results = executor.last_results();
  return run;
}

inline ReferenceRun run_reference(const Scenario& scenario, const SystemSpec& system,
                                  const std::vector<std::int64_t>& lengths,
                                  const reference::ReferenceOptions& options) {
  reference::ReferenceExecutor executor(options);
  return run_reference(executor, scenario, system, lengths);
}

// A random small scenario: up to 16 ranks (1, 2, 4 or 8 GPUs per node, NICs shared or not) and 1 to 10
// documents: single tokens, lengths below 2P, odd lengths and lengths up to `max_length`, with the sum
// of squared lengths (what the kernels and the float64 checks cost) held under `squared_budget`.
struct RandomCase {
  Scenario scenario;
  std::vector<std::int64_t> lengths;
};

inline RandomCase random_case(std::uint64_t seed, double squared_budget, std::int64_t max_length = 4096) {
  Rng rng(seed, 29);
  const int gpn_choices[] = {1, 2, 4, 8};
  const int gpus_per_node = gpn_choices[rng.below(4)];
  const int nodes = 1 + static_cast<int>(rng.below(static_cast<std::uint64_t>(16 / gpus_per_node)));
  RandomCase c{small_cluster(nodes, gpus_per_node, rng.below(2) == 0, seed), {}};
  const int world = c.scenario.cluster.world_size();
  const int documents = 1 + static_cast<int>(rng.below(10));
  const auto half = static_cast<std::uint64_t>(max_length / 2);
  double squared = 0;
  for (int i = 0; i < documents; ++i) {
    std::int64_t length = 1;
    switch (rng.below(5)) {
      case 0:
        length = 1;
        break;  // single token
      case 1:
        length = 1 + static_cast<std::int64_t>(rng.below(2ULL * world));
        break;  // below 2P
      case 2:
        length = 2 * static_cast<std::int64_t>(rng.below(half)) + 1;
        break;  // odd
      default:
        length = 1 + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(max_length)));
        break;
    }
    if (squared + static_cast<double>(length * length) > squared_budget) length = 1 + length % 97;
    squared += static_cast<double>(length * length);
    c.lengths.push_back(length);
  }
  return c;
}

inline std::string describe(const RandomCase& c) {
  std::string text = std::to_string(c.scenario.cluster.nodes) + "x" +
                     std::to_string(c.scenario.cluster.gpus_per_node) + " GPUs, " +
                     std::to_string(c.scenario.cluster.nics_per_node) + " NICs/node, lengths";
  for (const auto l : c.lengths) text += " " + std::to_string(l);
  return text;
}

// A scenario, its cost model and one plan of it, lowered as the scenario's passes say (returned as a
// prvalue: the cost model refers to the scenario's cluster, so the three stay together).
struct PreparedPlan {
  PreparedPlan(Scenario s, const SystemSpec& system, std::vector<std::int64_t> lengths,
               Passes passes = Passes::fwd)
      : scenario(std::move(s)), cost(scenario.cluster, scenario.model) {
    scenario.passes = passes;
    plan = make_strategy(system, scenario, cost)->make_plan(batch_of(std::move(lengths)));
  }
  [[nodiscard]] lower::Program program() const {
    return lower::lower(plan, cost, {.backward = scenario.passes == Passes::fwd_bwd});
  }
  Scenario scenario;
  CostModel cost;
  plan::Plan plan;
};

// Ring-CP on one node of 4 GPUs, two sequences: every rank's K/V travels a ring.
inline PreparedPlan ring_plan(Passes passes = Passes::fwd) {
  return PreparedPlan(small_cluster(1, 4, false, 3), system("ring-cp"), {300, 41}, passes);
}
// Zeppelin over two nodes of 8 GPUs, remapping between the linear and the attention layout (always, as
// the paper does: on this small model the estimate would rather not).
inline PreparedPlan remapping_plan(Passes passes = Passes::fwd) {
  return PreparedPlan(small_cluster(2, 8, false), system("zeppelin", {{"remap_policy", "always"}}),
                      {1638, 714, 9, 1}, passes);
}

// In-process options; with `gqa`, 4 query heads share 2 kv heads.
inline reference::ReferenceOptions in_process_options(bool gqa = false) {
  reference::ReferenceOptions options;
  options.transport = reference::TransportChoice::in_process;
  if (gqa) {
    options.heads = 4;
    options.kv_heads = 2;
  }
  return options;
}

// The reference's options for `system` on `scenario`: `options`, except that a system splitting heads as
// wide as a node (Zeppelin's heads: auto takes u up to the GPUs per node, where the ulysses variants
// above take 2) computes the model's own heads, so that every head slice it moves is whole reference
// heads (the default 2 reference heads are no whole part of a slice of 8/4 model heads).
inline reference::ReferenceOptions reference_options_for(const SystemSpec& system, const Scenario& scenario,
                                                         reference::ReferenceOptions options) {
  if (system.options.value("heads", std::string("ring")) == "auto") {
    options.heads = scenario.model.heads;
    options.kv_heads = scenario.model.kv_heads;
  }
  return options;
}

// The systems every integration test runs on `cluster`: every registered strategy and each value of its
// options, fixed degrees 2 where 2 divides the world, and USP (ulysses degree 2, ring 2) where 4 divides
// it. A ulysses degree must also divide the GPUs per node (a u-group stays in one node), so degree 2 is
// left out on one GPU per node.
inline std::vector<SystemSpec> reference_systems(const ClusterSpec& cluster) {
  std::vector<SystemSpec> systems = registered_variants(cluster.world_size(), {2});
  const bool pairs_in_a_node = cluster.gpus_per_node % 2 == 0;
  std::erase_if(systems, [&](const SystemSpec& s) {
    return s.name == "ulysses" && s.options.contains("degree") && s.options.at("degree") == 2 &&
           !pairs_in_a_node;
  });
  if (pairs_in_a_node && cluster.world_size() % 4 == 0)
    systems.push_back(system("ulysses", {{"degree", 2}, {"ring", 2}}));
  return systems;
}

}  // namespace zb::test
