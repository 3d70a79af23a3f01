// The shortcuts the driver takes for speed (docs/SIMULATOR.md "Speed") against closed forms: compute ops
// run as timers and end exactly `duration` after they start; idle streams choose at the end of an
// instant; a PCIe link that can never bind is left out of the solver's route but still reports its load;
// a remap sends one flow per peer, as an all-to-all-v does.
#include <gtest/gtest.h>

#include "core/exec/sim/platform.hpp"
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

using sim_test::kEfficiency;
using sim_test::kTolerance;

double compute_seconds(const plan::Plan& p, const ClusterSpec& c, int rank, int op) {
  const CostModel cost(c, sim_test::llama_7b());
  return lower::attention_seconds(p.ranks[static_cast<std::size_t>(rank)].ops[static_cast<std::size_t>(op)],
                                  cost, Pass::fwd);
}

const TraceEvent& event(const Trace& t, int rank, int op) {
  for (const auto& e : t.events) {
    if (e.rank == rank && e.op == op) return e;
  }
  throw std::runtime_error("no event for op " + std::to_string(op) + " of rank " + std::to_string(rank));
}

TEST(SimShortcuts, ComputeOpsEndExactlyTheirDurationLater) {
  const ClusterSpec c = cluster(1, 1, 1);
  plan::Plan p = empty_plan(c);
  const int a = add_op(p, 0, attention_op(3e9, 4096, {}));
  const int b = add_op(p, 0, attention_op(1e9, 2048, {a}));
  const Trace t = simulate(p, c);
  const double da = compute_seconds(p, c, 0, a);
  const double db = compute_seconds(p, c, 0, b);
  EXPECT_EQ(event(t, 0, a).start, 0.0);
  EXPECT_EQ(event(t, 0, a).end, da);
  EXPECT_EQ(event(t, 0, b).start, da);
  EXPECT_EQ(event(t, 0, b).end, da + db);
  EXPECT_EQ(t.layer.forward, da + db);
}

TEST(SimShortcuts, ListOrderHoldsWhenReleasesCoincide) {
  // Rank 0 runs A; rank 1 runs an identical op, so both end at the same date t. Rank 1's end releases
  // a zero-byte transfer to rank 0 at t, which makes C (op 2) ready; D (op 3) has been ready since 0.
  // Whichever of the two completions SimGrid reports first, rank 0's stream runs C at t, then D.
  const ClusterSpec c = cluster(1, 2, 1);
  plan::Plan p = empty_plan(c);
  const int a = add_op(p, 0, attention_op(2e9, 4096, {}));
  const int other = add_op(p, 1, attention_op(2e9, 4096, {}));
  const auto [send, recv] = add_transfer(p, 1, 0, 0, 7, {other});
  (void)send;
  ASSERT_EQ(recv, 1);
  const int cop = add_op(p, 0, attention_op(1e9, 4096, {recv}));
  const int dop = add_op(p, 0, attention_op(1e9, 4096, {}));
  const Trace t = simulate(p, c);
  const double ta = compute_seconds(p, c, 0, a);
  ASSERT_EQ(compute_seconds(p, c, 1, other), ta);
  EXPECT_EQ(event(t, 0, cop).start, ta);
  EXPECT_EQ(event(t, 0, dop).start, event(t, 0, cop).end);
}

TEST(SimShortcuts, PcieFasterThanAnUnsharedNicIsLeftOutOfTheSolverButReportsItsLoad) {
  ClusterSpec c = sim_test::dgx_h200(2);  // one NIC per GPU, PCIe 64 GB/s > NIC 50 GB/s
  const sim::Platform platform(c, HardwareProfile{});
  for (int l : platform.solver_route(0, 8))
    EXPECT_NE(platform.links()[static_cast<std::size_t>(l)].kind, LinkKind::pcie);
  EXPECT_EQ(platform.route(0, 8).size(), 4u);
  EXPECT_EQ(platform.route_latency(0, 8), c.nic.latency);

  plan::Plan p = empty_plan(c);
  const std::int64_t bytes = 64 << 20;
  add_transfer(p, 0, 8, bytes, 0);
  const Trace t = simulate(p, c);
  EXPECT_NEAR(t.layer.forward, c.nic.latency + bytes / (c.nic.bandwidth * kEfficiency), kTolerance);
  EXPECT_DOUBLE_EQ(sim_test::link(t, "n0-gpu0-pcie-up").bytes, static_cast<double>(bytes));
  EXPECT_DOUBLE_EQ(sim_test::link(t, "n1-gpu0-pcie-down").bytes, static_cast<double>(bytes));
}

TEST(SimShortcuts, PcieStaysInTheSolverRouteWhenItCanBind) {
  ClusterSpec shared = cluster(2, 8, 4);  // two GPUs per NIC: PCIe of one GPU carries a subset
  shared.pcie_bandwidth = 64e9;
  const sim::Platform a(shared, HardwareProfile{});
  EXPECT_EQ(a.solver_route(0, 8), a.route(0, 8));
  ClusterSpec slow = sim_test::dgx_h200(2);  // PCIe slower than the NIC: the bottleneck
  slow.pcie_bandwidth = 20e9;
  const sim::Platform b(slow, HardwareProfile{});
  EXPECT_EQ(b.solver_route(0, 8), b.route(0, 8));
}

TEST(SimShortcuts, RemapSendsOneFlowPerPeerThatSharesANicEquallyWithASend) {
  // Rank 0 remaps two ranges (equal size) to rank 2 on the other node and sends `bytes` to rank 3 at
  // the same time; both cross n0-nic0-tx. One flow per peer: each gets half, so both end at
  // latency + 2·bytes / bandwidth (two remap flows would take two thirds of the NIC between them).
  const ClusterSpec c = cluster(2, 2, 1);
  plan::Plan p = empty_plan(c);
  const std::int64_t bytes = 64 << 20;
  for (const int rank : {0, 2}) {
    plan::Op remap;
    remap.kind = plan::OpKind::remap;
    remap.name = "remap";
    remap.direction = plan::RemapDirection::to_linear;
    remap.moves = {{0, 2, {0, 0, 1000}}, {0, 2, {1, 0, 1000}}};
    (rank == 0 ? remap.bytes_out : remap.bytes_in) = bytes;
    add_op(p, rank, std::move(remap));
  }
  add_transfer(p, 0, 3, bytes, 0);
  const Trace t = simulate(p, c);
  const double both = c.nic.latency + 2.0 * bytes / (c.nic.bandwidth * kEfficiency);
  EXPECT_NEAR(event(t, 0, 0).end, both, kTolerance);
  EXPECT_NEAR(event(t, 2, 0).end, both, kTolerance);
  EXPECT_NEAR(t.layer.forward, both, kTolerance);
  EXPECT_DOUBLE_EQ(sim_test::link(t, "n0-nic0-tx").bytes, 2.0 * bytes);
}

// A calibrated profile's link classes: an inter-node transfer pays the NIC's latency plus the profile's
// NIC overhead and runs at the NIC efficiency, an intra-node one at the NVLink figures, as the cost model
// prices them (CostModel::transfer_time).
TEST(SimShortcuts, EachLinkClassRunsAtItsOwnEfficiencyAndOverhead) {
  const ClusterSpec c = sim_test::dgx_h200(2);
  HardwareProfile profile;
  profile.nic_bandwidth_efficiency = 0.25;
  profile.nic_transfer_overhead = 40e-6;
  profile.nvlink_bandwidth_efficiency = 0.5;
  profile.nvlink_transfer_overhead = 3e-6;
  const std::int64_t bytes = 16 << 20;
  plan::Plan inter = empty_plan(c);
  add_transfer(inter, 0, 8, bytes, 0);
  const double inter_expected = c.nic.latency + 40e-6 + bytes / (c.nic.bandwidth * 0.25);
  EXPECT_NEAR(simulate(inter, c, Passes::fwd, profile).layer.forward, inter_expected, kTolerance);
  plan::Plan intra = empty_plan(c);
  add_transfer(intra, 0, 1, bytes, 0);
  const double intra_expected = c.nvlink.latency + 3e-6 + bytes / (c.nvlink.bandwidth * 0.5);
  EXPECT_NEAR(simulate(intra, c, Passes::fwd, profile).layer.forward, intra_expected, kTolerance);
  const CostModel cost(c, sim_test::llama_7b(), profile);
  EXPECT_NEAR(cost.transfer_time(static_cast<double>(bytes), cost.nvlink(), LinkClass::nvlink),
              intra_expected, kTolerance);
}

}  // namespace
}  // namespace zb
