// How the simulator issues flows (core/exec/sim/simgrid_driver.cpp): each GPU's actor puts its flows
// into the receiving GPU's mailbox, whose actor is the permanent receiver, and the driver learns of
// their ends from the network model. These cases stress what that design could get wrong against
// closed forms: many flows leaving one GPU at one date, many arriving at one GPU, flows of one pair
// issued back to back (matched in order), and a program with nothing to send (the actors must still
// return, or SimGrid reports a deadlock). None may print anything: SimGrid speaks only when something
// is wrong (a deadlock, a Comm freed while running).
#include <gtest/gtest.h>

#include <string>

#include "tests/unit/sim/sim_test_support.hpp"

namespace zb {
namespace {

using sim_test::add_transfer;
using sim_test::cluster;
using sim_test::empty_plan;
using sim_test::simulate;

using sim_test::kEfficiency;
using sim_test::kTolerance;

// Simulates with standard error captured; fails the test if SimGrid or the driver printed anything.
Trace simulate_silently(const plan::Plan& p, const ClusterSpec& c) {
  testing::internal::CaptureStderr();
  Trace t = simulate(p, c);
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_EQ(said, "") << "the simulation printed to standard error";
  return t;
}

TEST(SimFlowIssue, OneGpuSendingToEveryGpuOfTheOtherNodeAtOnceSharesItsNicEvenly) {
  const ClusterSpec c = cluster(2, 8, 1);  // one NIC per node, shared by its 8 GPUs
  plan::Plan p = empty_plan(c);
  const std::int64_t bytes = 32 << 20;
  for (int peer = 8; peer < 16; ++peer) add_transfer(p, 0, peer, bytes, peer);
  const Trace t = simulate_silently(p, c);
  const double together = c.nic.latency + 8.0 * bytes / (c.nic.bandwidth * kEfficiency);
  EXPECT_NEAR(t.layer.forward, together, kTolerance);
  ASSERT_EQ(t.events.size(), 16u);
  for (const auto& e : t.events) {
    EXPECT_NEAR(e.start, 0.0, kTolerance) << e.name << " on rank " << e.rank;
    EXPECT_NEAR(e.end, together, kTolerance) << e.name << " on rank " << e.rank;
  }
}

TEST(SimFlowIssue, EveryGpuOfANodeSendingToOneGpuAtOnceSharesItsReceivingNic) {
  const ClusterSpec c = cluster(2, 8, 8);  // a NIC per GPU: only rank 8's receiving NIC is shared
  plan::Plan p = empty_plan(c);
  const std::int64_t bytes = 32 << 20;
  for (int src = 0; src < 8; ++src) add_transfer(p, src, 8, bytes, src);
  const Trace t = simulate_silently(p, c);
  EXPECT_NEAR(t.layer.forward, c.nic.latency + 8.0 * bytes / (c.nic.bandwidth * kEfficiency), kTolerance);
  EXPECT_DOUBLE_EQ(sim_test::link(t, "n1-nic0-rx").bytes, 8.0 * bytes);
}

TEST(SimFlowIssue, FlowsOfOnePairIssuedBackToBackEachEndAfterTheOneBefore) {
  // Each send waits for the previous one; the receives are all posted at once. In the simulator a flow is
  // its send: the k-th ends k transfers in, and its recv with it.
  const ClusterSpec c = cluster(1, 2, 1);
  plan::Plan p = empty_plan(c);
  const std::int64_t bytes = 64 << 20;
  const double one = c.nvlink.latency + bytes / (c.nvlink.bandwidth * kEfficiency);
  int previous_send = -1;
  for (int k = 0; k < 5; ++k) {
    const auto [send, recv] = add_transfer(
        p, 0, 1, bytes, k, previous_send >= 0 ? std::vector<int>{previous_send} : std::vector<int>{});
    previous_send = send;
  }
  const Trace t = simulate_silently(p, c);
  EXPECT_NEAR(t.layer.forward, 5 * one, 5 * kTolerance);
  for (const auto& e : t.events) {
    const int k = std::stoi(e.name.substr(e.name.find(' ') + 1));
    EXPECT_NEAR(e.end, (k + 1) * one, 5 * kTolerance) << e.name << " on rank " << e.rank;
  }
}

TEST(SimFlowIssue, AProgramWithNothingToSendEndsAtOnceAndQuietly) {
  const ClusterSpec c = cluster(2, 8, 8);
  const Trace t = simulate_silently(empty_plan(c), c);
  EXPECT_EQ(t.layer.forward, 0.0);
  EXPECT_TRUE(t.events.empty());
}

}  // namespace
}  // namespace zb
