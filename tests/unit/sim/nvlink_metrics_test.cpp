// NVLink figures (docs/METRICS.md, "NVLink utilisation"): what the simulator puts on each GPU's NVLink
// port is exactly what the Program moves inside a node: point-to-point legs between two GPUs of a node
// (ring steps, routed transfers' dispatch and combine), remap messages, and every ring step of a
// collective (tensor parallelism's all-gather and reduce-scatter among them). The Program is summed here
// independently of the simulator's link accounting.
#include <gtest/gtest.h>

#include <map>

#include "core/config/presets.hpp"
#include "core/lower/lower.hpp"
#include "core/metrics/metrics.hpp"
#include "core/strategies/strategy.hpp"
#include "tests/unit/sim/sim_test_support.hpp"

namespace zb {
namespace {

struct GpuBytes {
  std::map<int, double> tx, rx;  // rank → bytes of one layer (forward + backward)
  [[nodiscard]] double total_tx() const {
    double sum = 0;
    for (const auto& [rank, bytes] : tx) sum += bytes;
    return sum;
  }
};

// The bytes the Program moves between two GPUs of one node, per sender and receiver, by the execution
// rules of core/lower/program.hpp: a send leg moves its bytes; an all_to_all_v one message per pair; a
// ring collective p − 1 steps of `bytes` per member to the next (all-reduce 2(p − 1) of bytes/p;
// all-to-all p − 1 steps of bytes/(p − 1), step s to the member s + 1 places on).
GpuBytes intra_node_bytes(const lower::Program& program, const ClusterSpec& cluster) {
  GpuBytes out;
  const auto add = [&](int src, int dst, double bytes) {
    if (src == dst || cluster.node_of(src) != cluster.node_of(dst)) return;
    out.tx[src] += bytes;
    out.rx[dst] += bytes;
  };
  for (const lower::RankProgram& rp : program.ranks) {
    for (const lower::Instr& in : rp.instrs) {
      if (in.kind == lower::InstrKind::send) add(rp.rank, in.peer, static_cast<double>(in.bytes));
    }
  }
  for (const lower::Collective& c : program.collectives) {
    const auto p = static_cast<int>(c.ranks.size());
    if (c.kind == lower::CollectiveKind::all_to_all_v) {
      for (const int id : c.messages) {
        const lower::Message& m = program.messages.at(static_cast<std::size_t>(id));
        add(m.src, m.dst, static_cast<double>(m.bytes));
      }
      continue;
    }
    if (p < 2) continue;
    int steps = p - 1;
    auto step_bytes = static_cast<double>(c.bytes);
    if (c.kind == lower::CollectiveKind::all_reduce) steps = 2 * (p - 1), step_bytes /= p;
    if (c.kind == lower::CollectiveKind::all_to_all) step_bytes /= p - 1;
    for (int s = 0; s < steps; ++s) {
      const int shift = c.kind == lower::CollectiveKind::all_to_all ? s + 1 : 1;
      for (int k = 0; k < p; ++k)
        add(c.ranks[static_cast<std::size_t>(k)], c.ranks[static_cast<std::size_t>((k + shift) % p)],
            step_bytes);
    }
  }
  return out;
}

struct SimulatedRun {
  RunMetrics metrics;
  GpuBytes program;  // one layer
  int layers = 0;
  int tp_collectives = 0;
};

SimulatedRun simulate(const std::string& strategy, nlohmann::json options, int nodes, int tensor) {
  Scenario s = sim_test::scenario(find_cluster_preset("dgx-h200")->spec, Passes::fwd_bwd);
  s.cluster.nodes = nodes;
  s.parallelism.tensor = tensor;
  const CostModel cost(s.cluster, s.model);
  SystemSpec system;
  system.name = system.label = strategy;
  system.options = std::move(options);
  Batch batch;
  batch.lengths = {16384, 8192, 8192, 4096, 4096, 2048, 2048, 1024, 1024, 512, 512};
  const plan::Plan p = make_strategy(system, s, cost)->make_plan(batch);
  EXPECT_TRUE(p.feasible());
  const lower::Program& program = *program_for_run(p, cost, s.passes, /*rows=*/false);
  const Trace t = execute(*make_executor(Backend::sim), p, s, cost);
  SimulatedRun run{compute_run_metrics(p, t, cost, s, 10), intra_node_bytes(program, s.cluster),
                   s.model.layers, 0};
  for (const lower::Collective& c : program.collectives)
    run.tp_collectives += c.group < 0 && c.kind != lower::CollectiveKind::all_to_all_v;
  return run;
}

// The simulator's link bytes are sums of the same flow amounts the Program states; only the order of the
// floating-point additions differs, so 1e-9 relative is far above rounding and far below one message.
constexpr double kRelative = 1e-9;

void expect_matches_program(const SimulatedRun& run) {
  ASSERT_TRUE(run.metrics.nvlink_recorded());
  EXPECT_NEAR(run.metrics.nvlink_bytes, run.layers * run.program.total_tx(),
              kRelative * run.metrics.nvlink_bytes);
  const int gpus_per_node = 8;
  for (const NvlinkMetrics& g : run.metrics.nvlinks) {
    const int rank = g.node * gpus_per_node + g.gpu;
    const double tx = run.program.tx.contains(rank) ? run.layers * run.program.tx.at(rank) : 0.0;
    const double rx = run.program.rx.contains(rank) ? run.layers * run.program.rx.at(rank) : 0.0;
    EXPECT_NEAR(g.tx_bytes, tx, kRelative * tx + 1e-3) << "rank " << rank;
    EXPECT_NEAR(g.rx_bytes, rx, kRelative * rx + 1e-3) << "rank " << rank;
  }
}

TEST(NvlinkMetrics, TensorParallelTrafficIsWhatTheProgramMovesInsideANode) {
  const SimulatedRun run =
      simulate("uniform-cp", {{"degree", 1}}, 1, 2);  // no CP ring: TP's collectives alone
  ASSERT_GT(run.tp_collectives, 0);
  EXPECT_GT(run.metrics.nvlink_bytes, 0.0);
  expect_matches_program(run);
  EXPECT_EQ(run.metrics.nvlinks.size(), 8U);
  EXPECT_GT(run.metrics.nvlink_utilization_mean, 0.0);
  EXPECT_GE(run.metrics.nvlink_utilization_max, run.metrics.nvlink_utilization_mean);
  // No byte moves faster than NVLink's efficiency lets it (0.9 of nominal by default).
  EXPECT_LE(run.metrics.nvlink_utilization_max, 0.9 + 1e-9);
}

TEST(NvlinkMetrics, RingsRoutingAndRemapsUnderTensorParallelismAddUpToo) {
  expect_matches_program(simulate("zeppelin", nlohmann::json::object(), 2, 2));
  expect_matches_program(simulate("ring-cp", {{"degree", 4}}, 1, 2));
}

TEST(NvlinkMetrics, NoIntraNodeTrafficIsZeroNotMissing) {
  // One GPU per document pack, no tensor parallelism: nothing crosses NVLink in the layers.
  const SimulatedRun run = simulate("uniform-cp", {{"degree", 1}}, 2, 1);
  EXPECT_EQ(run.program.total_tx(), 0.0);
  ASSERT_TRUE(run.metrics.nvlink_recorded());
  EXPECT_EQ(run.metrics.nvlinks.size(), 16U);
  EXPECT_EQ(run.metrics.nvlink_bytes, 0.0);
  EXPECT_EQ(run.metrics.nvlink_utilization_mean, 0.0);
  EXPECT_EQ(run.metrics.nvlink_utilization_max, 0.0);
}

TEST(NvlinkMetrics, UtilisationIsBytesOverNominalBandwidthAndTheLayersTime) {
  const SimulatedRun run = simulate("uniform-cp", {{"degree", 1}}, 1, 2);
  for (const NvlinkMetrics& g : run.metrics.nvlinks) {
    EXPECT_DOUBLE_EQ(g.bandwidth, find_cluster_preset("dgx-h200")->spec.nvlink.bandwidth);
    EXPECT_NEAR(g.tx_utilization, g.tx_bytes / (g.bandwidth * run.metrics.layers_seconds), 1e-12);
    EXPECT_NEAR(g.rx_utilization, g.rx_bytes / (g.bandwidth * run.metrics.layers_seconds), 1e-12);
  }
}

}  // namespace
}  // namespace zb
