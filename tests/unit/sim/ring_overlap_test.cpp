// Rings: compute overlaps transfers (a ring whose step compute exceeds its transfer takes the compute
// time), transfers are exposed when they are slower, routed transfers use every NIC of the node, and
// the same plan gives the same trace bit for bit.
#include <gtest/gtest.h>

#include "core/lower/lower.hpp"
#include "tests/unit/sim/sim_test_support.hpp"

namespace zb {
namespace {

using sim_test::add_op;
using sim_test::add_transfer;
using sim_test::attention_op;
using sim_test::cluster;
using sim_test::empty_plan;
using sim_test::simulate;

// A P-rank ring on one node: step s computes, then (s ≥ 1) waits for the KV the left neighbour sent.
// Each step has `pairs` attention pairs and each hop moves `bytes`.
plan::Plan ring_plan(const ClusterSpec& c, int parts, double pairs, std::int64_t bytes) {
  plan::Plan p = empty_plan(c);
  p.groups.push_back({0, plan::Level::intra_node, {}, {}, plan::Sharding::zigzag, 0});
  for (int r = 0; r < parts; ++r) p.groups[0].ranks.push_back(r);
  std::vector<int> last_recv(static_cast<std::size_t>(parts), -1);
  for (int r = 0; r < parts; ++r) add_op(p, r, attention_op(pairs, 4096, {}, 0, 0));
  for (int step = 1; step < parts; ++step) {
    std::vector<int> recv_now(static_cast<std::size_t>(parts), -1);
    for (int r = 0; r < parts; ++r) {
      const int dst = (r + 1) % parts;
      const int dep = last_recv[static_cast<std::size_t>(r)];
      const auto [s, rv] = add_transfer(p, r, dst, bytes, step * parts + r,
                                        dep >= 0 ? std::vector<int>{dep} : std::vector<int>{});
      for (plan::Op* op : {&p.ranks[static_cast<std::size_t>(r)].ops[static_cast<std::size_t>(s)],
                           &p.ranks[static_cast<std::size_t>(dst)].ops[static_cast<std::size_t>(rv)]}) {
        op->group = 0;
        op->step = step;
      }
      recv_now[static_cast<std::size_t>(dst)] = rv;
    }
    for (int r = 0; r < parts; ++r)
      add_op(p, r, attention_op(pairs, 4096, {recv_now[static_cast<std::size_t>(r)]}, 0, step));
    last_recv = recv_now;
  }
  return p;
}

TEST(SimRing, ComputeBoundRingTakesTheComputeTime) {
  const ClusterSpec c = cluster(1, 4, 1);
  const CostModel cost(c, sim_test::llama_7b());
  const double pairs = 4e8;
  const std::int64_t bytes = 16 << 20;  // ~40 µs on NVLink, far below the step's compute
  const plan::Plan p = ring_plan(c, 4, pairs, bytes);
  const double step = lower::attention_seconds(p.ranks[0].ops[0], cost, Pass::fwd);
  ASSERT_GT(step, 2 * (c.nvlink.latency + bytes / (c.nvlink.bandwidth * 0.9)));
  const Trace t = simulate(p, c);
  EXPECT_NEAR(t.layer.forward, 4 * step, 1e-9);
  ASSERT_FALSE(t.ring_step_stats.empty());
  EXPECT_EQ(t.ring_step_stats[0].level, plan::Level::intra_node);
  EXPECT_EQ(t.ring_step_stats[0].count, 12);  // steps 1..3, four hops each
  EXPECT_NEAR(t.ring_step_stats[0].max_seconds, c.nvlink.latency + bytes / (c.nvlink.bandwidth * 0.9), 1e-9);
}

TEST(SimRing, TransferBoundRingExposesTheTransfer) {
  const ClusterSpec c = cluster(1, 4, 1);
  const CostModel cost(c, sim_test::llama_7b());
  const std::int64_t bytes = 4LL << 30;  // ~10 ms per hop
  const plan::Plan p = ring_plan(c, 4, 1e6, bytes);
  const double step = lower::attention_seconds(p.ranks[0].ops[0], cost, Pass::fwd);
  const double hop = c.nvlink.latency + bytes / (c.nvlink.bandwidth * 0.9);
  ASSERT_LT(step, hop);
  const Trace t = simulate(p, c);
  EXPECT_NEAR(t.layer.forward, 3 * hop + step, 1e-9);
}

TEST(SimRing, ComputeStreamRunsInStrictListOrder) {
  // Op 1 waits for a transfer; op 2 is ready at once but, as on a CUDA stream, runs after op 1.
  const ClusterSpec c = cluster(1, 2, 1);
  plan::Plan p = empty_plan(c);
  auto [send, recv] = add_transfer(p, 0, 1, 1LL << 30, 0);
  (void)send;
  add_op(p, 1, attention_op(1e9, 4096, {recv}));
  add_op(p, 1, attention_op(1e9, 4096, {}));
  const Trace t = simulate(p, c);
  std::vector<const TraceEvent*> compute;
  for (const auto& e : t.events) {
    if (e.rank == 1 && e.track == Track::compute) compute.push_back(&e);
  }
  ASSERT_EQ(compute.size(), 2u);
  EXPECT_EQ(compute[0]->op, 1);
  EXPECT_GT(compute[0]->start, 0.0);
  EXPECT_EQ(compute[1]->op, 2);
  EXPECT_EQ(compute[1]->start, compute[0]->end);
}

TEST(SimRouting, RoutedSendSpreadsOverEveryNicAndPipelines) {
  const ClusterSpec c = sim_test::dgx_h200(2);
  const std::int64_t bytes = 256 << 20;
  const plan::Route route = sim_test::routed_over_every_nic(bytes, 4);
  plan::Plan routed = empty_plan(c);
  add_transfer(routed, 0, 8, bytes, 0, {}, {}, route);
  plan::Plan direct = empty_plan(c);
  add_transfer(direct, 0, 8, bytes, 0);
  const Trace tr = simulate(routed, c);
  const Trace td = simulate(direct, c);
  for (int nic = 0; nic < 8; ++nic) {
    EXPECT_DOUBLE_EQ(sim_test::link(tr, "n0-nic" + std::to_string(nic) + "-tx").bytes, bytes / 8.0);
    EXPECT_DOUBLE_EQ(sim_test::link(tr, "n1-nic" + std::to_string(nic) + "-rx").bytes, bytes / 8.0);
  }
  EXPECT_DOUBLE_EQ(sim_test::link(td, "n0-nic1-tx").bytes, 0.0);
  EXPECT_LT(tr.layer.forward * 4, td.layer.forward);
  int legs = 0;
  for (const auto& e : tr.events) legs += e.track == Track::nic ? 1 : 0;
  EXPECT_EQ(legs, 4 * (7 + 8 + 7));  // the proxy equal to the source (or destination) has no NVLink leg
}

TEST(SimDeterminism, SamePlanSameTraceBitForBit) {
  const ClusterSpec c = cluster(2, 4, 2);
  plan::Plan p = ring_plan(c, 8, 2e8, 64 << 20);
  p.groups[0].level = plan::Level::inter_node;
  const Trace a = simulate(p, c, Passes::fwd_bwd);
  const Trace b = simulate(p, c, Passes::fwd_bwd);
  ASSERT_EQ(a.events.size(), b.events.size());
  for (std::size_t i = 0; i < a.events.size(); ++i) {
    EXPECT_EQ(a.events[i].start, b.events[i].start);
    EXPECT_EQ(a.events[i].end, b.events[i].end);
    EXPECT_EQ(a.events[i].name, b.events[i].name);
  }
  ASSERT_EQ(a.links.size(), b.links.size());
  for (std::size_t i = 0; i < a.links.size(); ++i) {
    ASSERT_EQ(a.links[i].series.size(), b.links[i].series.size());
    for (std::size_t k = 0; k < a.links[i].series.size(); ++k) {
      EXPECT_EQ(a.links[i].series[k].t, b.links[i].series[k].t);
      EXPECT_EQ(a.links[i].series[k].bytes_per_second, b.links[i].series[k].bytes_per_second);
    }
  }
  EXPECT_EQ(a.iteration_seconds, b.iteration_seconds);
}

}  // namespace
}  // namespace zb
