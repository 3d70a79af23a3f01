// The transports and the remap exchange on their own: buffered sends cannot deadlock a ring, a receive
// that never comes ends in an error naming the rank and the tag, a multi-process launch without MPI is
// refused, and rows moved attention → linear → attention come back bit for bit.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <thread>

#include "core/common/rng.hpp"
#include "core/exec/reference/in_process_transport.hpp"
#include "core/exec/reference/remap_exchange.hpp"
#include "tests/integration/reference_support.hpp"

namespace zb {
namespace {

using namespace std::chrono_literals;
using reference::Bytes;
using reference::MessageKind;
using reference::Tag;

// Runs body(rank, transport) on one thread per rank over one fabric.
template <typename Body>
void on_ranks(int ranks, Body body) {
  reference::InProcessFabric fabric(ranks);
  std::vector<std::jthread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      reference::InProcessTransport transport(fabric, r);
      body(r, transport);
    });
}

TEST(InProcessTransport, RingWhereEveryRankSendsFirstDoesNotDeadlock) {
  constexpr int ranks = 6;
  std::vector<int> got(ranks, -1);
  on_ranks(ranks, [&](int r, reference::Transport& t) {
    for (int step = 0; step < 3; ++step) {
      t.send((r + 1) % ranks, Tag::make(MessageKind::kv, static_cast<std::uint64_t>(step)), Bytes(1000, std::byte{static_cast<unsigned char>(r)}));
    }
    for (int step = 0; step < 3; ++step) {
      const Bytes b = t.recv((r + ranks - 1) % ranks, Tag::make(MessageKind::kv, static_cast<std::uint64_t>(step)), 5s);
      got[static_cast<std::size_t>(r)] = static_cast<int>(b.front());
    }
  });
  for (int r = 0; r < ranks; ++r) EXPECT_EQ(got[static_cast<std::size_t>(r)], (r + ranks - 1) % ranks);
}

TEST(InProcessTransport, ReceiveThatNeverComesNamesRankSourceAndTag) {
  on_ranks(2, [](int r, reference::Transport& t) {
    if (r != 1) return;
    try {
      (void)t.recv(0, Tag::make(MessageKind::kv, 42), 200ms);
      ADD_FAILURE() << "recv returned without a message";
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("rank 1: waited"), std::string::npos) << m;
      EXPECT_NE(m.find("tag 42"), std::string::npos) << m;
      EXPECT_NE(m.find("from rank 0"), std::string::npos) << m;
    }
  });
}

TEST(Launcher, MultiProcessLaunchWithoutMpiTransportIsRefused) {
  ::setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  try {
    (void)reference::resolve_transport(reference::TransportChoice::in_process, 4);
    ADD_FAILURE() << "a 4-process launch running every rank in each process was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    EXPECT_NE(std::string(e.what()).find("one of 4"), std::string::npos) << e.what();
  }
  ::unsetenv("OMPI_COMM_WORLD_SIZE");
  EXPECT_EQ(reference::resolve_transport(reference::TransportChoice::automatic, 4), reference::TransportChoice::in_process);
}

// The moves of a Zeppelin plan that rebalances (2 × 8 GPUs, two long documents). Should the strategy stop
// remapping this batch, every shard's second half moves to the next rank instead, so the exchange is
// still proven on many ranges.
std::vector<plan::RemapMove> round_trip_moves(const plan::Plan& p) {
  if (!p.remap.empty()) return p.remap;
  std::vector<plan::RemapMove> moves;
  for (const auto& layout : p.attention_layout)
    for (const auto& shard : layout.shards)
      if (shard.size() > 1)
        moves.push_back({layout.rank, (layout.rank + 1) % p.world_size,
                         {shard.seq, shard.begin + shard.size() / 2, shard.end}});
  return moves;
}

TEST(RemapExchange, AttentionToLinearAndBackReturnsEveryTokenBitForBit) {
  const Scenario s = test::small_cluster(2, 8, false);
  const CostModel cost(s.cluster, s.model);
  const plan::Plan p = make_strategy(test::system("zeppelin"), s, cost)->make_plan(test::batch_of({1638, 714, 9, 1}));
  const std::vector<plan::RemapMove> moves = round_trip_moves(p);
  ASSERT_FALSE(moves.empty());
  RecordProperty("moves_from_the_plan", p.remap.empty() ? "no (synthetic)" : "yes");
  constexpr int width = 32;
  // Arbitrary bit patterns, NaNs and infinities included: the exchange must not touch a bit.
  auto row_bits = [](int seq, std::int64_t token, int i) {
    Rng rng(static_cast<std::uint64_t>(seq) * 1000003 + static_cast<std::uint64_t>(token), static_cast<std::uint64_t>(i));
    const auto bits = static_cast<std::uint32_t>(rng.next_u64());
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  };
  std::vector<int> checked(static_cast<std::size_t>(p.world_size), 0);
  on_ranks(p.world_size, [&](int r, reference::Transport& t) {
    reference::RowStore rows(width);
    for (const auto& shard : p.attention_layout[static_cast<std::size_t>(r)].shards) {
      std::vector<float> values;
      for (std::int64_t tok = shard.begin; tok < shard.end; ++tok)
        for (int i = 0; i < width; ++i) values.push_back(row_bits(shard.seq, tok, i));
      rows.put(shard.seq, shard.begin, shard.end, values);
    }
    const reference::RemapEndpoint endpoint{r, {&rows}, "rank " + std::to_string(r) + " round trip"};
    for (const auto direction : {plan::RemapDirection::to_linear, plan::RemapDirection::to_attention}) {
      const Tag tag = Tag::make(MessageKind::remap, static_cast<std::uint64_t>(direction));
      const auto traffic = reference::remap_traffic(r, moves, direction);
      (void)reference::send_remap_rows(t, tag, traffic, endpoint);
      std::vector<int> waiting;
      for (const auto& [peer, ranges] : traffic.incoming) waiting.push_back(peer);
      while (!waiting.empty()) {
        (void)reference::receive_remap_rows(t, tag, traffic, waiting, endpoint, p.sequences);
        if (!waiting.empty()) {
          ASSERT_TRUE(t.wait_for_message(5s)) << "rank " << r << " got no remap rows";
        }
      }
      // Each moved range is on its new rank only.
      for (const auto& m : moves) {
        const int now = direction == plan::RemapDirection::to_linear ? m.dst : m.src;
        EXPECT_EQ(rows.has(m.range.seq, m.range.begin, m.range.end), now == r)
            << "rank " << r << " seq " << m.range.seq << " [" << m.range.begin << ", " << m.range.end << ")";
      }
    }
    for (const auto& shard : p.attention_layout[static_cast<std::size_t>(r)].shards) {
      const auto got = rows.rows(shard.seq, shard.begin, shard.end);
      for (std::int64_t tok = shard.begin; tok < shard.end; ++tok) {
        for (int i = 0; i < width; ++i) {
          const float want = row_bits(shard.seq, tok, i);
          ASSERT_EQ(std::memcmp(&got[static_cast<std::size_t>((tok - shard.begin) * width + i)], &want, sizeof want), 0)
              << "rank " << r << " seq " << shard.seq << " token " << tok;
        }
      }
      checked[static_cast<std::size_t>(r)] += static_cast<int>(shard.size());
    }
  });
  int total = 0;
  for (const int c : checked) total += c;
  EXPECT_EQ(total, 1638 + 714 + 9 + 1);
}

}  // namespace
}  // namespace zb
