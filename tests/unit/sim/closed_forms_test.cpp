// The simulator against closed forms: a lone transfer, flows sharing a NIC, GPUs sharing a NIC
// (a800-4nic), and the backward pass's doubled bytes. Times agree to SimGrid's timing precision (1 ns).
#include <gtest/gtest.h>

#include "core/common/error.hpp"
#include "tests/unit/sim/sim_test_support.hpp"

namespace zb {
namespace {

using sim_test::add_transfer;
using sim_test::cluster;
using sim_test::empty_plan;
using sim_test::simulate;

using sim_test::kEfficiency;
using sim_test::kTolerance;

TEST(SimClosedForm, OneInterNodeTransferTakesLatencyPlusBytesOverBandwidth) {
  const ClusterSpec c = cluster(2, 1, 1);
  plan::Plan p = empty_plan(c);
  const std::int64_t bytes = 256 << 20;
  add_transfer(p, 0, 1, bytes, 0);
  const Trace t = simulate(p, c);
  EXPECT_NEAR(t.layer.forward, c.nic.latency + bytes / (c.nic.bandwidth * kEfficiency), kTolerance);
  EXPECT_DOUBLE_EQ(t.iteration_seconds, 32 * t.layer.forward);
  EXPECT_DOUBLE_EQ(sim_test::link(t, "n0-nic0-tx").bytes, static_cast<double>(bytes));
  EXPECT_DOUBLE_EQ(sim_test::link(t, "n1-nic0-rx").bytes, static_cast<double>(bytes));
  EXPECT_DOUBLE_EQ(sim_test::link(t, "n0-nic0-rx").bytes, 0.0);
}

TEST(SimClosedForm, OneIntraNodeTransferUsesNvlink) {
  const ClusterSpec c = cluster(1, 2, 1);
  plan::Plan p = empty_plan(c);
  const std::int64_t bytes = 1 << 30;
  add_transfer(p, 0, 1, bytes, 0);
  const Trace t = simulate(p, c);
  EXPECT_NEAR(t.layer.forward, c.nvlink.latency + bytes / (c.nvlink.bandwidth * kEfficiency), kTolerance);
  EXPECT_DOUBLE_EQ(sim_test::link(t, "n0-gpu0-nvl-out").bytes, static_cast<double>(bytes));
  EXPECT_DOUBLE_EQ(sim_test::link(t, "n0-gpu1-nvl-in").bytes, static_cast<double>(bytes));
  // The series is the transfer's rate over its bandwidth phase, and its busy time that phase.
  const LinkLoad& out = sim_test::link(t, "n0-gpu0-nvl-out");
  ASSERT_EQ(out.series.size(), 2u);
  EXPECT_NEAR(out.series[0].bytes_per_second, c.nvlink.bandwidth * kEfficiency, 1.0);
  EXPECT_NEAR(out.busy_seconds, bytes / (c.nvlink.bandwidth * kEfficiency), kTolerance);
}

TEST(SimClosedForm, TwoFlowsThroughOneNicEachGetHalf) {
  // Rank 0 sends to ranks 2 and 3 at once: both flows cross n0-nic0-tx.
  const ClusterSpec c = cluster(2, 2, 2);
  plan::Plan p = empty_plan(c);
  const std::int64_t bytes = 128 << 20;
  add_transfer(p, 0, 2, bytes, 0);
  add_transfer(p, 0, 3, bytes, 1);
  const Trace t = simulate(p, c);
  EXPECT_NEAR(t.layer.forward, c.nic.latency + 2.0 * bytes / (c.nic.bandwidth * kEfficiency), kTolerance);
  ASSERT_EQ(t.events.size(), 4u);
  for (const auto& e : t.events) EXPECT_NEAR(e.end - e.start, t.layer.forward, kTolerance) << e.name;
}

TEST(SimClosedForm, TwoGpusSharingAnA800NicHalveEachOther) {
  // a800-4nic: 8 GPUs, 4 NICs, GPUs 2i and 2i+1 share NIC i.
  const ClusterSpec c = cluster(2, 8, 4);
  ASSERT_EQ(c.gpu_to_nic, (std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3}));
  const std::int64_t bytes = 64 << 20;
  const double alone = c.nic.latency + bytes / (c.nic.bandwidth * kEfficiency);

  plan::Plan shared = empty_plan(c);  // GPUs 0 and 1: one NIC
  add_transfer(shared, 0, 8, bytes, 0);
  add_transfer(shared, 1, 9, bytes, 1);
  const Trace ts = simulate(shared, c);
  EXPECT_NEAR(ts.layer.forward, c.nic.latency + 2.0 * bytes / (c.nic.bandwidth * kEfficiency), kTolerance);

  plan::Plan separate = empty_plan(c);  // GPUs 0 and 2: two NICs
  add_transfer(separate, 0, 8, bytes, 0);
  add_transfer(separate, 2, 10, bytes, 1);
  const Trace tp = simulate(separate, c);
  EXPECT_NEAR(tp.layer.forward, alone, kTolerance);
}

TEST(SimClosedForm, BackwardMovesTheTransferAgainAfterTheForwardLayer) {
  // An opaque transfer (no K/V owner, so no dK/dV accumulator follows it): the backward pass moves the
  // same bytes once more, after the barrier that ends the forward layer.
  const ClusterSpec c = cluster(2, 1, 1);
  plan::Plan p = empty_plan(c);
  const std::int64_t bytes = 32 << 20;
  add_transfer(p, 0, 1, bytes, 0);
  const Trace t = simulate(p, c, Passes::fwd_bwd);
  const double rate = c.nic.bandwidth * kEfficiency;
  EXPECT_NEAR(t.layer.forward, c.nic.latency + bytes / rate, kTolerance);
  EXPECT_NEAR(t.layer.backward, c.nic.latency + bytes / rate, kTolerance);
  EXPECT_NEAR(t.iteration_seconds, 32 * (t.layer.forward + t.layer.backward), 1e-12);
  EXPECT_DOUBLE_EQ(sim_test::link(t, "n0-nic0-tx").bytes, 2.0 * bytes);
}

TEST(SimClosedForm, BackwardSendsTheKvAndItsGradientAccumulator) {
  // Rank 0 passes its K/V to rank 1 (a ring of two, one step): backward sends the K/V again and, one
  // step behind, rank 0's dK/dV partial along the same hop; rank 1 returns the finished dK/dV to rank 0.
  const ClusterSpec c = cluster(2, 1, 1);
  plan::Plan p = empty_plan(c);
  p.sequences.push_back({0, 64, 0});
  p.groups.push_back({0, plan::Level::inter_node, {0, 1}, {0}, plan::Sharding::zigzag, 0});
  const std::int64_t bytes = 32 << 20;
  auto [send, recv] = add_transfer(p, 0, 1, bytes, 0);
  for (auto* op :
       {&p.ranks[0].ops[static_cast<std::size_t>(send)], &p.ranks[1].ops[static_cast<std::size_t>(recv)]}) {
    op->group = 0;
    op->step = 1;
    op->kv_owner = 0;
  }
  const Trace t = simulate(p, c, Passes::fwd_bwd);
  const double hop = c.nic.latency + bytes / (c.nic.bandwidth * kEfficiency);
  EXPECT_NEAR(t.layer.forward, hop, kTolerance);
  // K/V and dK/dV share NIC 0's tx; then the return hop uses NIC 1's tx.
  EXPECT_NEAR(t.layer.backward, c.nic.latency + 2.0 * bytes / (c.nic.bandwidth * kEfficiency) + hop,
              kTolerance);
  EXPECT_DOUBLE_EQ(sim_test::link(t, "n0-nic0-tx").bytes, 3.0 * bytes);
  EXPECT_DOUBLE_EQ(sim_test::link(t, "n1-nic0-tx").bytes, 1.0 * bytes);
}

TEST(SimClosedForm, PcieLinkJoinsTheInterNodeRoute) {
  ClusterSpec c = cluster(2, 1, 1);
  c.pcie_bandwidth = 20e9;  // slower than the NIC: the bottleneck
  plan::Plan p = empty_plan(c);
  const std::int64_t bytes = 64 << 20;
  add_transfer(p, 0, 1, bytes, 0);
  const Trace t = simulate(p, c);
  EXPECT_NEAR(t.layer.forward, c.nic.latency + bytes / (*c.pcie_bandwidth * kEfficiency), kTolerance);
  EXPECT_DOUBLE_EQ(sim_test::link(t, "n0-gpu0-pcie-up").bytes, static_cast<double>(bytes));
}

TEST(SimClosedForm, OversubscribedCoreIsShared) {
  // 2 nodes × 2 GPUs × 2 NICs, core oversubscribed 4×: capacity 2·2·50/4 = 50 GB/s for two flows.
  ClusterSpec c = cluster(2, 2, 2);
  c.oversubscription = 4.0;
  plan::Plan p = empty_plan(c);
  const std::int64_t bytes = 64 << 20;
  add_transfer(p, 0, 2, bytes, 0);
  add_transfer(p, 1, 3, bytes, 1);
  const Trace t = simulate(p, c);
  const double core = c.nodes * c.nics_per_node * c.nic.bandwidth / c.oversubscription * kEfficiency;
  EXPECT_NEAR(t.layer.forward, c.nic.latency + 2.0 * bytes / core, kTolerance);
}

TEST(SimExecutors, CudaIsItsOwnBackendWhenBuiltAndReferenceIsItsOwnBackend) {
#ifdef ZEPPELIN_HAVE_CUDA_EXECUTOR
  // Built with CUDA and NCCL: the executor exists; without a GPU its run() says so (exit 3, tests/cli).
  EXPECT_EQ(make_executor(Backend::cuda)->backend(), "cuda");
#else
  try {
    (void)make_executor(Backend::cuda);
    FAIL() << "this build has no cuda executor";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    EXPECT_NE(std::string(e.what()).find("was not found when this build was configured"), std::string::npos)
        << e.what();
  }
#endif
  EXPECT_EQ(make_executor(Backend::reference)->backend(), "reference");  // core/exec/reference
  EXPECT_EQ(make_executor(Backend::sim)->backend(), "sim");
}

}  // namespace
}  // namespace zb
