// How the cuda backend turns measured item times into the Trace (core/exec/cuda/trace_events.hpp) and
// carries a rank's record through MPI (trace_codec.hpp), on the hand-made two-rank program: the events
// the simulator would emit, at the times measured, the backward layer after the forward one, and ring
// steps spanning the sender's first byte to the receiver's last.
#include <gtest/gtest.h>

#include "core/common/error.hpp"
#include "core/exec/cuda/trace_codec.hpp"
#include "core/exec/cuda/trace_events.hpp"
#include "tests/unit/cuda_exec/hand_programs.hpp"

namespace zb::cuda {
namespace {

// Item k of each rank runs in [k, k + 0.5) ms after the pass start.
PassTimes staircase(std::size_t items) {
  PassTimes t;
  for (std::size_t k = 0; k < items; ++k) {
    t.start.push_back(k * 1e-3);
    t.end.push_back(k * 1e-3 + 0.5e-3);
  }
  t.seconds = static_cast<double>(items) * 1e-3;
  return t;
}

std::vector<RankRecord> records(const lower::Program& p, const GlobalOrder& order, double offset) {
  std::vector<RankRecord> all(2);
  for (int r = 0; r < 2; ++r)
    add_pass_events(p, order, r, Pass::fwd, staircase(order.issue[static_cast<std::size_t>(r)].size()),
                    offset, all[static_cast<std::size_t>(r)]);
  return all;
}

TEST(CudaTrace, EveryInstructionBecomesTheSimulatorsEventAtItsMeasuredTime) {
  lower::Program p = crossed_sends();
  p.ranks[0].instrs[2].flops = 5e9;
  const GlobalOrder order = derive_order(p);
  Trace trace;
  assemble_trace(p, records(p, order, 0.25), trace);
  ASSERT_EQ(trace.events.size(), 6u);  // per rank: a send, a recv, an attention
  const TraceEvent* attention = nullptr;
  for (const TraceEvent& e : trace.events) {
    if (e.rank == 0 && e.category == EventCategory::attention) attention = &e;
    if (e.category == EventCategory::send || e.category == EventCategory::recv) {
      EXPECT_EQ(e.track, Track::comm);
      EXPECT_EQ(e.bytes, 1024.0);
      EXPECT_EQ(e.peer, 1 - e.rank);
    }
  }
  ASSERT_NE(attention, nullptr);
  EXPECT_EQ(attention->flops, 5e9);
  EXPECT_EQ(attention->track, Track::compute);
  EXPECT_NEAR(attention->start, 0.25 + 2e-3, 1e-12);  // its rank's third item, offset by 0.25 s
  EXPECT_NEAR(attention->end, 0.25 + 2.5e-3, 1e-12);
  // Sorted by (pass, rank, stream, start): rank 0's compute event first.
  EXPECT_EQ(trace.events.front().rank, 0);
  EXPECT_EQ(trace.events.front().track, Track::compute);
  EXPECT_TRUE(trace.ring_steps.empty());  // no message of a CP group
}

TEST(CudaTrace, RingStepsSpanTheSendersFirstByteToTheReceiversLast) {
  lower::Program p = crossed_sends();
  for (auto& m : p.messages) m.group = 0, m.step = 0;
  const GlobalOrder order = derive_order(p);  // one fused step: item 0 on both ranks
  Trace trace;
  assemble_trace(p, records(p, order, 0.0), trace);
  ASSERT_EQ(trace.ring_steps.size(), 2u);
  for (const RingStepTransfer& r : trace.ring_steps) {
    EXPECT_EQ(r.level, layout::Level::intra_node);
    EXPECT_EQ(r.bytes, 1024.0);
    EXPECT_NEAR(r.start, 0.0, 1e-12);
    EXPECT_NEAR(r.end, 0.5e-3, 1e-12);
  }
}

TEST(CudaTrace, ARankRecordCrossesTheWireUnchanged) {
  const lower::Program p = crossed_sends();
  RankRecord mine = records(p, derive_order(p), 1.5)[1];
  mine.spans.push_back({7, 0.125, 0.75});
  const RankRecord back = decode(encode(mine));
  ASSERT_EQ(back.events.size(), mine.events.size());
  for (std::size_t i = 0; i < mine.events.size(); ++i) {
    EXPECT_EQ(back.events[i].name, mine.events[i].name);
    EXPECT_EQ(back.events[i].category, mine.events[i].category);
    EXPECT_EQ(back.events[i].start, mine.events[i].start);
    EXPECT_EQ(back.events[i].end, mine.events[i].end);
    EXPECT_EQ(back.events[i].peer, mine.events[i].peer);
    EXPECT_EQ(back.events[i].bytes, mine.events[i].bytes);
  }
  ASSERT_EQ(back.spans.size(), mine.spans.size());
  EXPECT_EQ(back.spans.back().message, 7);
  EXPECT_EQ(back.spans.back().end, 0.75);
  std::vector<char> cut = encode(mine);
  cut.pop_back();
  EXPECT_THROW((void)decode(cut), Error);
}

DeviceActivity activity(int rank, std::uint32_t stream, double start) {
  DeviceActivity a;
  a.rank = rank;
  a.cuda_stream = stream;
  a.kind = DeviceActivityKind::memcpy;
  a.name = "memcpy DtoD";
  a.copy_kind = "DtoD";
  a.pass = Pass::bwd;
  a.start = start;
  a.end = start + 1e-6;
  a.bytes = 4096;
  a.device = rank;
  a.correlation = 99;
  return a;
}

LinkLoad measured_nic(int node, int index) {
  LinkLoad l;
  l.name = "n" + std::to_string(node) + "-nic" + std::to_string(index) + "-tx";
  l.kind = LinkKind::nic_tx;
  l.node = node;
  l.index = index;
  l.bandwidth = 50e9;
  l.series = {{0.0, 2e9}, {0.5e-3, 0.0}};
  l.bytes = 1e6;
  l.busy_seconds = 0.5e-3;
  l.measured = true;
  return l;
}

TEST(CudaTrace, DeviceActivityNicLoadsAndNotesCrossTheWireUnchanged) {
  RankRecord mine;
  mine.activity.push_back(activity(3, 14, 0.125));
  mine.links.push_back(measured_nic(1, 2));
  mine.notes.push_back("no InfiniBand device on this node");
  const RankRecord back = decode(encode(mine));
  ASSERT_EQ(back.activity.size(), 1u);
  const DeviceActivity& a = back.activity[0];
  EXPECT_EQ(a.rank, 3);
  EXPECT_EQ(a.cuda_stream, 14u);
  EXPECT_EQ(a.kind, DeviceActivityKind::memcpy);
  EXPECT_EQ(a.name, "memcpy DtoD");
  EXPECT_EQ(a.copy_kind, "DtoD");
  EXPECT_EQ(a.pass, Pass::bwd);
  EXPECT_EQ(a.start, 0.125);
  EXPECT_EQ(a.end, 0.125 + 1e-6);
  EXPECT_EQ(a.bytes, 4096.0);
  EXPECT_EQ(a.device, 3);
  EXPECT_EQ(a.correlation, 99u);
  ASSERT_EQ(back.links.size(), 1u);
  const LinkLoad& l = back.links[0];
  EXPECT_EQ(l.name, "n1-nic2-tx");
  EXPECT_EQ(l.kind, LinkKind::nic_tx);
  EXPECT_EQ(l.node, 1);
  EXPECT_EQ(l.index, 2);
  EXPECT_EQ(l.bandwidth, 50e9);
  EXPECT_EQ(l.bytes, 1e6);
  EXPECT_EQ(l.busy_seconds, 0.5e-3);
  EXPECT_TRUE(l.measured);
  EXPECT_EQ(l.expected_bytes, -1.0);
  ASSERT_EQ(l.series.size(), 2u);
  EXPECT_EQ(l.series[0].bytes_per_second, 2e9);
  EXPECT_EQ(l.series[1].t, 0.5e-3);
  EXPECT_EQ(back.notes, mine.notes);
  std::vector<char> cut = encode(mine);
  cut.resize(cut.size() - 3);
  EXPECT_THROW((void)decode(cut), Error);
}

TEST(CudaTrace, EveryRanksActivityAndEveryNodesNicLoadsReachTheTrace) {
  const lower::Program p = crossed_sends();
  std::vector<RankRecord> all = records(p, derive_order(p), 0.0);
  all[1].activity = {activity(1, 20, 0.002), activity(1, 13, 0.001)};
  all[1].activity[0].pass = Pass::fwd;
  all[0].activity = {activity(0, 13, 0.003)};
  all[0].links = {measured_nic(0, 0), measured_nic(0, 1)};
  Trace trace;
  assemble_trace(p, all, trace);
  ASSERT_EQ(trace.device_activity.size(), 3u);
  // (pass, rank, stream, start): rank 1's forward record first, then the backward ones by rank.
  EXPECT_EQ(trace.device_activity[0].pass, Pass::fwd);
  EXPECT_EQ(trace.device_activity[1].rank, 0);
  EXPECT_EQ(trace.device_activity[2].rank, 1);
  EXPECT_EQ(trace.device_activity[2].cuda_stream, 13u);
  ASSERT_EQ(trace.links.size(), 2u);
  EXPECT_EQ(trace.links[1].name, "n0-nic1-tx");
}

TEST(CudaTrace, WhatSeveralRanksSayAlikeIsSaidOnce) {
  std::vector<RankRecord> all(3);
  all[0].notes = {"node 0: no InfiniBand device"};
  all[1].notes = {"CUPTI dropped 4 activity records on rank 1"};
  all[2].notes = {"node 0: no InfiniBand device"};
  EXPECT_EQ(distinct_notes(all), "node 0: no InfiniBand device; CUPTI dropped 4 activity records on rank 1");
  EXPECT_EQ(distinct_notes(std::vector<RankRecord>(2)), "");
}

}  // namespace
}  // namespace zb::cuda
