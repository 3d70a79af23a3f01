// Per-message overhead and interference (docs/SIMULATOR.md): a message occupies its sender for the
// profile's overhead before its bytes move, one message after another per sender; compute runs at
// 1/(1 + comm_compute_slowdown) while its GPU has a transfer in flight, relays on a proxy included; and
// `interference: false` restores the free-communication model.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "tests/unit/sim/sim_test_support.hpp"

namespace zb {
namespace {

using sim_test::add_op;
using sim_test::add_transfer;
using sim_test::attention_op;
using sim_test::cluster;
using sim_test::empty_plan;
using sim_test::simulate;

using sim_test::kTolerance;

// The defaults' overheads and no interference: what the overhead tests isolate.
HardwareProfile overheads_only() {
  HardwareProfile profile;
  profile.interference = 0;
  return profile;
}

const TraceEvent& compute_event(const Trace& t, int rank) {
  const auto it = std::find_if(t.events.begin(), t.events.end(), [&](const TraceEvent& e) {
    return e.rank == rank && e.track == Track::compute;
  });
  if (it == t.events.end()) throw std::runtime_error("no compute event on rank " + std::to_string(rank));
  return *it;
}

TEST(SimOverhead, ALoneMessagePaysItsClassOverheadOnce) {
  const HardwareProfile profile = overheads_only();
  const ClusterSpec c = cluster(2, 2, 2);
  const std::int64_t bytes = 64 << 20;
  plan::Plan inter = empty_plan(c);
  add_transfer(inter, 0, 2, bytes, 0);
  EXPECT_NEAR(simulate(inter, c, Passes::fwd, profile).layer.forward,
              profile.nic_transfer_overhead + c.nic.latency + bytes / (c.nic.bandwidth * 0.9), kTolerance);
  plan::Plan intra = empty_plan(c);
  add_transfer(intra, 0, 1, bytes, 0);
  EXPECT_NEAR(simulate(intra, c, Passes::fwd, profile).layer.forward,
              profile.nvlink_transfer_overhead + c.nvlink.latency + bytes / (c.nvlink.bandwidth * 0.9),
              kTolerance);
}

TEST(SimOverhead, OneSendersMessagesPayTheirOverheadsInTurnWhileManySendersOverlap) {
  const HardwareProfile profile = overheads_only();
  const ClusterSpec c = cluster(1, 8, 1);
  const std::int64_t tiny = 8;
  const double wire = c.nvlink.latency + tiny / (c.nvlink.bandwidth * 0.9);
  // Rank 0 sends one tiny message to each of the 7 others: the last leaves after 7 overheads.
  plan::Plan fan_out = empty_plan(c);
  for (int dst = 1; dst < 8; ++dst) add_transfer(fan_out, 0, dst, tiny, dst);
  EXPECT_NEAR(simulate(fan_out, c, Passes::fwd, profile).layer.forward,
              7 * profile.nvlink_transfer_overhead + wire, kTolerance);
  // Seven senders, one message each: their overheads overlap as their latencies do.
  plan::Plan fan_in = empty_plan(c);
  for (int src = 1; src < 8; ++src) add_transfer(fan_in, src, 0, tiny, src);
  EXPECT_NEAR(simulate(fan_in, c, Passes::fwd, profile).layer.forward,
              profile.nvlink_transfer_overhead + wire, kTolerance);
}

// Rank 1 runs an attention kernel with no dependency while rank 0 sends it a transfer that outlasts it:
// the kernel runs at full speed until the first byte moves (after the sender's overhead), then slowed.
TEST(SimInterference, ComputeOverlappedByATransferRunsSlowerByTheProfileFactor) {
  const ClusterSpec c = cluster(1, 2, 1);
  HardwareProfile profile;  // the defaults: interference on
  const double s = profile.comm_compute_slowdown;
  ASSERT_GT(s, 0.0);
  plan::Plan p = empty_plan(c);
  add_transfer(p, 0, 1, 8LL << 30, 0);  // ~20 ms on NVLink
  add_op(p, 1, attention_op(4e8, 4096, {}));
  const Trace on = simulate(p, c, Passes::fwd, profile);
  const Trace off = simulate(p, c, Passes::fwd, overheads_only());
  const double alone = compute_event(off, 1).end - compute_event(off, 1).start;
  const double o = profile.nvlink_transfer_overhead;
  ASSERT_GT(alone, o);
  const TraceEvent& slowed = compute_event(on, 1);
  EXPECT_NEAR(slowed.end - slowed.start, o + (alone - o) * (1 + s), 1e-9);
  EXPECT_NEAR(slowed.interference_seconds, (alone - o) * s, 1e-9);
  EXPECT_EQ(compute_event(off, 1).interference_seconds, 0.0);
}

TEST(SimInterference, ComputeAfterTheTransferEndsRunsAtFullSpeed) {
  const ClusterSpec c = cluster(1, 2, 1);
  plan::Plan p = empty_plan(c);
  auto [send, recv] = add_transfer(p, 0, 1, 1 << 20, 0);
  (void)send;
  add_op(p, 1, attention_op(4e8, 4096, {recv}));
  const Trace on = simulate(p, c, Passes::fwd, HardwareProfile{});
  const Trace off = simulate(p, c, Passes::fwd, overheads_only());
  EXPECT_NEAR(compute_event(on, 1).end - compute_event(on, 1).start,
              compute_event(off, 1).end - compute_event(off, 1).start, kTolerance);
}

// A proxy GPU relaying a routed chunk pays for it: its own kernel, overlapped by the relay, slows down;
// with interference off it does not.
TEST(SimInterference, AProxyRelayingATransferSlowsItsOwnCompute) {
  const ClusterSpec c = sim_test::dgx_h200(2);
  const std::int64_t bytes = 1LL << 30;
  const plan::Route route = sim_test::routed_over_every_nic(bytes, 4);
  plan::Plan p = empty_plan(c);
  add_transfer(p, 0, 8, bytes, 0, {}, {}, route);
  add_op(p, 3, attention_op(4e8, 4096, {}));  // GPU 3 is a proxy and otherwise idle
  const Trace on = simulate(p, c, Passes::fwd, HardwareProfile{});
  const Trace off = simulate(p, c, Passes::fwd, overheads_only());
  const double slowed = compute_event(on, 3).end - compute_event(on, 3).start;
  const double alone = compute_event(off, 3).end - compute_event(off, 3).start;
  EXPECT_GT(slowed, alone * 1.01);
  EXPECT_LE(slowed, alone * (1 + HardwareProfile{}.comm_compute_slowdown) + kTolerance);
  EXPECT_GT(compute_event(on, 3).interference_seconds, 0.0);
}

TEST(SimInterference, SameInputsSameTraceBitForBit) {
  const ClusterSpec c = cluster(1, 2, 1);
  plan::Plan p = empty_plan(c);
  add_transfer(p, 0, 1, 2LL << 30, 0);
  add_op(p, 1, attention_op(4e8, 4096, {}));
  add_op(p, 0, attention_op(2e8, 2048, {}));
  const Trace a = simulate(p, c, Passes::fwd_bwd, HardwareProfile{});
  const Trace b = simulate(p, c, Passes::fwd_bwd, HardwareProfile{});
  ASSERT_EQ(a.events.size(), b.events.size());
  for (std::size_t i = 0; i < a.events.size(); ++i) {
    EXPECT_EQ(a.events[i].start, b.events[i].start);
    EXPECT_EQ(a.events[i].end, b.events[i].end);
  }
  EXPECT_EQ(a.iteration_seconds, b.iteration_seconds);
}

}  // namespace
}  // namespace zb
