// The estimate's all-to-all-v: its messages share the links they hold, as bandwidth sharing would, instead
// of queueing first come, first served. A shift pattern (every rank sends to its next two) is where the
// queue used to chain every message of the cluster behind the one before it.
#include <gtest/gtest.h>

#include "core/lower/schedule.hpp"

namespace zb {
namespace {

constexpr double kSecondsPerByte = 1e-9;

// One all_to_all_v over `ranks` members, each on its own node, member r sending `bytes` to each of
// r+1 … r+fan_out (mod ranks): one collective instruction per rank and nothing else.
lower::Program shift_all_to_all(int ranks, int fan_out, std::int64_t bytes) {
  lower::Program p;
  p.world_size = ranks;
  p.gpus_per_node = 1;
  p.backward = false;
  lower::Collective col;
  col.kind = lower::CollectiveKind::all_to_all_v;
  for (int r = 0; r < ranks; ++r) {
    lower::RankProgram rank;
    rank.rank = r;
    lower::Instr in;
    in.kind = lower::InstrKind::collective;
    in.stream = lower::Stream::comm;
    in.collective = 0;
    rank.instrs.push_back(in);
    rank.first_backward = 1;
    p.ranks.push_back(std::move(rank));
    col.ranks.push_back(r);
    col.instrs.push_back(0);
    for (int k = 1; k <= fan_out; ++k) {
      lower::Message m;
      m.purpose = lower::Purpose::remap;
      m.src = r;
      m.dst = (r + k) % ranks;
      m.bytes = bytes;
      m.collective = 0;
      col.messages.push_back(static_cast<int>(p.messages.size()));
      p.messages.push_back(std::move(m));
    }
  }
  p.collectives.push_back(std::move(col));
  return p;
}

// Each rank's send side (2r) and receive side (2r + 1), as the estimate's NICs across nodes.
lower::TransferModel send_and_receive_sides(int ranks) {
  lower::TransferModel model;
  model.p2p = [](int, int, std::int64_t bytes, const lower::Message&) {
    return static_cast<double>(bytes) * kSecondsPerByte;
  };
  model.collective = [](const lower::Collective&) { return 0.0; };
  model.links = [](int src, int dst, const lower::Message&, std::vector<int>& links) {
    links.push_back(2 * src);
    links.push_back(2 * dst + 1);
  };
  model.link_count = 2 * ranks;
  return model;
}

TEST(ScheduleSharing, AllToAllVTakesItsBusiestLinksLoadWhateverTheClusterSize) {
  const std::int64_t bytes = 1 << 20;
  const double one = static_cast<double>(bytes) * kSecondsPerByte;
  for (const int ranks : {4, 16, 64, 256}) {
    for (const int fan_out : {1, 2, 3}) {
      const lower::Program p = shift_all_to_all(ranks, fan_out, bytes);
      const lower::Schedule s = lower::schedule(p, send_and_receive_sides(ranks));
      ASSERT_TRUE(s.complete);
      // Every send side and every receive side carries fan_out messages: that many message times, not
      // a chain growing with the cluster.
      EXPECT_NEAR(s.finish, fan_out * one, 1e-12) << ranks << " ranks, fan-out " << fan_out;
    }
  }
}

TEST(ScheduleSharing, WithoutALinkModelEachMessageTakesItsOwnTime) {
  const std::int64_t bytes = 1 << 20;
  lower::TransferModel model = send_and_receive_sides(64);
  model.links = nullptr;
  model.link_count = 0;
  const lower::Schedule s = lower::schedule(shift_all_to_all(64, 3, bytes), model);
  ASSERT_TRUE(s.complete);
  EXPECT_NEAR(s.finish, static_cast<double>(bytes) * kSecondsPerByte, 1e-12);
}

// Legs after the collective on the same links wait for its traffic to drain.
TEST(ScheduleSharing, LaterLegsQueueBehindTheCollectivesTraffic) {
  const std::int64_t bytes = 1 << 20;
  lower::Program p = shift_all_to_all(8, 2, bytes);
  // Rank 0 then sends to rank 4 once its part of the collective is done.
  lower::Message m;
  m.src = 0;
  m.dst = 4;
  m.bytes = bytes;
  const int message = static_cast<int>(p.messages.size());
  p.messages.push_back(m);
  lower::Instr send;
  send.kind = lower::InstrKind::send;
  send.stream = lower::Stream::comm;
  send.peer = 4;
  send.message = message;
  send.bytes = bytes;
  send.deps.push_back(0);
  lower::Instr recv = send;
  recv.kind = lower::InstrKind::recv;
  recv.peer = 0;
  recv.last_leg = true;
  recv.deps = {};
  send.match = static_cast<int>(p.ranks[4].instrs.size());
  recv.match = static_cast<int>(p.ranks[0].instrs.size());
  p.ranks[0].instrs.push_back(send);
  p.ranks[4].instrs.push_back(recv);
  for (auto& r : p.ranks) r.first_backward = static_cast<int>(r.instrs.size());
  const lower::Schedule s = lower::schedule(p, send_and_receive_sides(8));
  ASSERT_TRUE(s.complete);
  const double one = static_cast<double>(bytes) * kSecondsPerByte;
  EXPECT_NEAR(s.finish, 3 * one, 1e-12);  // two message times of the collective, then its own
}

}  // namespace
}  // namespace zb
