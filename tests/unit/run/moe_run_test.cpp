// A run of an MoE model (issue 34): every system is timed with its plan resized by the router's choices for
// each iteration, and reports the MoE figures of docs/METRICS.md ("The MoE layer") from that routing: the
// load imbalances the plan's routing states, the dispatch bytes its exchanges carry (every layer), and a
// share of the layer time; a dense run reports none of them. The same scenario and seed give the same
// figures, byte for byte.
#include <gtest/gtest.h>

#include <string>

#include "core/config/scenario_loader.hpp"
#include "core/run/run_scenario.hpp"

namespace zb {
namespace {

Scenario moe_scenario(int expert_degree) {
  return parse_scenario(R"({"name": "moe-run", "seed": 5,
      "cluster": {"preset": "dgx-h100", "nodes": 2, "gpus_per_node": 4, "nics_per_node": 4},
      "model": {"preset": "moe-8x550m", "moe": {"routing": {"skew": 0.8, "document_correlation": 0.5}}},
      "parallelism": {"expert": )" +
                            std::to_string(expert_degree) + R"(},
      "workload": {"dataset": "wikipedia", "max_seq_len": 8192, "tokens_per_iteration": 32768, "iterations": 3},
      "systems": ["zeppelin", "ring-cp", "packing-dp"]})",
                        "moe-run.json");
}

TEST(MoeRun, EverySystemReportsTheRoutingOfItsOwnPlan) {
  const Scenario s = moe_scenario(8);
  const RunResult run = run_scenario(s);
  for (const SystemResult& system : run.systems) {
    for (const IterationResult& it : system.iterations) {
      SCOPED_TRACE(system.system.label + " iteration " + std::to_string(it.iteration));
      ASSERT_TRUE(it.feasible);
      const RunMetrics& m = it.metrics;
      ASSERT_TRUE(m.moe_recorded());
      const auto& facts = it.plan_info.at("moe_layer");
      EXPECT_EQ(facts.at("routing"), "realised");  // the router's, not the planner's balanced routing
      EXPECT_GE(facts.at("layer").get<int>(), 0);
      EXPECT_DOUBLE_EQ(m.expert_load_imbalance, facts.at("expert_load_imbalance").get<double>());
      // One expert per rank (8 experts, e = 8): the rank imbalance is the expert imbalance; skew 0.8 makes
      // both clearly uneven, and neither can exceed E / k = 4.
      EXPECT_DOUBLE_EQ(m.expert_rank_imbalance, m.expert_load_imbalance);
      EXPECT_GT(m.expert_load_imbalance, 1.1);
      EXPECT_LE(m.expert_load_imbalance, 4.0);
      // Expert groups of 8 span both 4-GPU nodes: about half of every rank's dispatch crosses a NIC.
      EXPECT_GT(m.moe_dispatch_bytes, 0.0);
      EXPECT_GT(m.moe_dispatch_nic_bytes, 0.2 * m.moe_dispatch_bytes);
      EXPECT_LT(m.moe_dispatch_nic_bytes, m.moe_dispatch_bytes);
      EXPECT_GT(m.moe_share, 0.0);
      EXPECT_LE(m.moe_share, 1.0);
    }
  }
}

TEST(MoeRun, ExpertGroupsInsideANodeKeepTheDispatchOffTheNics) {
  const RunResult run = run_scenario(moe_scenario(4));
  for (const SystemResult& system : run.systems)
    for (const IterationResult& it : system.iterations) {
      ASSERT_TRUE(it.metrics.moe_recorded()) << system.system.label;
      EXPECT_GT(it.metrics.moe_dispatch_bytes, 0.0) << system.system.label;
      EXPECT_EQ(it.metrics.moe_dispatch_nic_bytes, 0.0) << system.system.label;
    }
}

TEST(MoeRun, SameSeedSameFiguresAndADenseRunHasNone) {
  const RunResult a = run_scenario(moe_scenario(8));
  const RunResult b = run_scenario(moe_scenario(8));
  for (std::size_t s = 0; s < a.systems.size(); ++s)
    for (std::size_t i = 0; i < a.systems[s].iterations.size(); ++i) {
      const RunMetrics& x = a.systems[s].iterations[i].metrics;
      const RunMetrics& y = b.systems[s].iterations[i].metrics;
      EXPECT_EQ(x.iteration_seconds, y.iteration_seconds);
      EXPECT_EQ(x.expert_load_imbalance, y.expert_load_imbalance);
      EXPECT_EQ(x.moe_dispatch_bytes, y.moe_dispatch_bytes);
      EXPECT_EQ(x.moe_share, y.moe_share);
    }
  Scenario dense = moe_scenario(1);
  dense.model =
      parse_scenario(R"({"name": "d", "cluster": {"preset": "dgx-h100"}, "model": {"preset": "llama-7b"},
      "workload": {"dataset": "wikipedia"}, "systems": ["ring-cp"]})",
                     "d.json")
          .model;
  const RunResult d = run_scenario(dense);
  for (const SystemResult& system : d.systems)
    for (const IterationResult& it : system.iterations) EXPECT_FALSE(it.metrics.moe_recorded());
}

}  // namespace
}  // namespace zb
