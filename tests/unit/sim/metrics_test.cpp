// Run metrics on hand-made traces and plans: useful FLOPs, the breakdown's precedence, NIC utilisation.
#include <gtest/gtest.h>

#include "core/metrics/metrics.hpp"
#include "tests/unit/sim/sim_test_support.hpp"

namespace zb {
namespace {

using sim_test::add_op;
using sim_test::add_transfer;
using sim_test::attention_op;
using sim_test::cluster;
using sim_test::empty_plan;

TEST(RunMetrics, BreakdownNicUtilisationAndUsefulFlops) {
  // Rank 1 computes while its transfer from rank 0 is in flight, then waits for it: exposed comm.
  const ClusterSpec c = cluster(2, 1, 1);
  plan::Plan p = empty_plan(c);
  p.sequences.push_back({0, 4096, 0});
  p.linear_layout[0].shards.push_back({0, 0, 2048});
  p.linear_layout[1].shards.push_back({0, 2048, 4096});
  const std::int64_t bytes = 512 << 20;  // ~11.9 ms on one NIC
  auto [send, recv] = add_transfer(p, 0, 1, bytes, 0);
  (void)send;
  add_op(p, 1, attention_op(4096.0 * 4097 / 2, 4096, {}));
  add_op(p, 1, attention_op(1, 1, {recv}));
  const Scenario s = sim_test::scenario(c, Passes::fwd);
  const CostModel cost(c, s.model);
  const Trace t = execute(*make_executor(Backend::sim), p, s, cost);
  const RunMetrics m = compute_run_metrics(p, t, cost, s, 10);

  const double pairs = 4096.0 * 4097 / 2;
  // The layers' FLOPs and the LM head's vocabulary GEMM (forward only: 2·tokens·h·V).
  EXPECT_DOUBLE_EQ(m.useful_flops, 32 * (cost.attention_fwd_flops(pairs) + cost.linear_fwd_flops(4096)) +
                                       2.0 * 4096 * 4096 * 32000);
  // A forward-only iteration: the layers, then the embedding and head of the slowest rank; no gradients.
  EXPECT_DOUBLE_EQ(m.layers_seconds, t.iteration_seconds);
  EXPECT_GT(m.embedding_and_head_seconds, 0.0);
  EXPECT_EQ(m.gradient_sync_exposed_seconds, 0.0);
  EXPECT_EQ(m.optimizer_seconds, 0.0);
  EXPECT_DOUBLE_EQ(m.iteration_seconds, m.layers_seconds + m.embedding_and_head_seconds);
  EXPECT_NEAR(m.critical_rank_breakdown.total(), m.iteration_seconds, 1e-12);
  EXPECT_NEAR(m.mean_breakdown.total(), m.iteration_seconds, 1e-12);
  EXPECT_DOUBLE_EQ(m.tokens, 4096);
  EXPECT_NEAR(m.mfu, m.useful_flops / m.iteration_seconds / 2 / c.gpu.peak_flops, 1e-12);
  EXPECT_DOUBLE_EQ(m.token_imbalance, 1.0);
  EXPECT_NEAR(m.attention_imbalance, 2.0, 1e-6);  // all attention on rank 1

  const auto per_rank = rank_breakdowns(t);
  const TimeBreakdown& b1 = per_rank[1];
  const double total = b1.attention + b1.linear + b1.remap + b1.exposed_communication + b1.idle;
  EXPECT_NEAR(total, t.iteration_seconds, 1e-9);
  EXPECT_GT(b1.exposed_communication, 0.0);
  EXPECT_EQ(m.critical_rank, 1);

  ASSERT_EQ(m.nics.size(), 2u);
  const double window = t.trace_seconds();
  EXPECT_NEAR(m.nics[0].tx_utilization, bytes / (c.nic.bandwidth * window), 1e-12);
  EXPECT_EQ(m.nics[0].rx_utilization, 0.0);
  EXPECT_NEAR(m.nics[1].rx_utilization, m.nics[0].tx_utilization, 1e-12);
  EXPECT_NEAR(m.nic_utilization_max, m.nics[0].tx_utilization, 1e-12);
  ASSERT_EQ(m.nics[0].tx_timeline.size(), 10u);
  double sum = 0;
  for (double u : m.nics[0].tx_timeline) sum += u * c.nic.bandwidth * m.timeline_bin_seconds;
  EXPECT_NEAR(sum, static_cast<double>(bytes), 1.0);
  EXPECT_NEAR(m.nics[0].tx_timeline[1], 0.9,
              1e-6);  // a lone flow runs at the p2p efficiency (bin 0 holds the latency)
}

TEST(RunMetrics, TheWholeIterationAddsItsPartsAndLowersMfu) {
  // Two GPUs on two nodes, each computing its own 4096-token document forward and backward.
  const ClusterSpec c = cluster(2, 1, 1);
  plan::Plan p = empty_plan(c);
  p.sequences.push_back({0, 4096, 0});
  p.sequences.push_back({1, 4096, 1});
  p.linear_layout[0].shards.push_back({0, 0, 4096});
  p.linear_layout[1].shards.push_back({1, 0, 4096});
  add_op(p, 0, attention_op(4096.0 * 4097 / 2, 4096, {}));
  add_op(p, 1, attention_op(4096.0 * 4097 / 2, 4096, {}));
  const Scenario s = sim_test::scenario(c, Passes::fwd_bwd);
  const CostModel cost(c, s.model);
  const Trace t = execute(*make_executor(Backend::sim), p, s, cost);
  const RunMetrics m = compute_run_metrics(p, t, cost, s);

  EXPECT_DOUBLE_EQ(m.layers_seconds, t.iteration_seconds);
  EXPECT_GT(m.embedding_and_head_seconds, 0.0);
  EXPECT_GT(m.gradient_sync_seconds, 0.0);
  EXPECT_GT(m.gradient_sync_exposed_seconds, 0.0);  // at least the embedding's buckets, done last
  EXPECT_LE(m.gradient_sync_exposed_seconds, m.gradient_sync_seconds);
  EXPECT_GT(m.optimizer_seconds, 0.0);
  EXPECT_NEAR(
      m.iteration_seconds,
      m.layers_seconds + m.embedding_and_head_seconds + m.gradient_sync_exposed_seconds + m.optimizer_seconds,
      1e-12);
  EXPECT_NEAR(m.critical_rank_breakdown.total(), m.iteration_seconds, 1e-12);
  EXPECT_NEAR(m.critical_rank_breakdown.gradient_sync_exposed, m.gradient_sync_exposed_seconds, 1e-15);
  // MFU over the whole iteration is below the layers-only figure, even with the head's FLOPs counted.
  const double pairs = 4096.0 * 4097 / 2;
  const double layer_flops = 2 * 32 *
                             (cost.attention_fwd_flops(pairs) + cost.attention_bwd_flops(pairs) +
                              cost.linear_fwd_flops(4096) + cost.linear_bwd_flops(4096));
  EXPECT_LT(m.mfu, layer_flops / m.layers_seconds / 2 / c.gpu.peak_flops);
}

}  // namespace
}  // namespace zb
