// The transports and the remap exchange on their own: buffered sends cannot deadlock a ring, a receive
// that never comes ends in an error naming the rank and the tag, a multi-process launch without MPI is
// refused, and rows moved by the Program's all_to_all_v collectives (linear → attention for Q, K, V;
// attention → linear for O) arrive bit for bit.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <thread>

#include "core/common/rng.hpp"
#include "core/exec/reference/all_to_all_v.hpp"
#include "core/exec/reference/in_process_transport.hpp"
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
      t.send((r + 1) % ranks, Tag::make(MessageKind::transfer, static_cast<std::uint64_t>(step)),
             Bytes(1000, std::byte{static_cast<unsigned char>(r)}));
    }
    for (int step = 0; step < 3; ++step) {
      const Bytes b = t.recv((r + ranks - 1) % ranks,
                             Tag::make(MessageKind::transfer, static_cast<std::uint64_t>(step)), 5s);
      got[static_cast<std::size_t>(r)] = static_cast<int>(b.front());
    }
  });
  for (int r = 0; r < ranks; ++r) EXPECT_EQ(got[static_cast<std::size_t>(r)], (r + ranks - 1) % ranks);
}

TEST(InProcessTransport, ReceiveThatNeverComesNamesRankSourceAndTag) {
  on_ranks(2, [](int r, reference::Transport& t) {
    if (r != 1) return;
    try {
      (void)t.recv(0, Tag::make(MessageKind::transfer, 42), 200ms);
      ADD_FAILURE() << "recv returned without a message";
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("rank 1: waited"), std::string::npos) << m;
      EXPECT_NE(m.find("key 42"), std::string::npos) << m;
      EXPECT_NE(m.find("from rank 0"), std::string::npos) << m;
    }
  });
}

// In one process a stall does not stop the other ranks, but a rank past the last barrier waits for the
// others' records (row statistics, results) without the stall timeout: the notice of a rank that gave up
// ends that wait at once, as a secondary failure, instead of after hours.
TEST(InProcessTransport, AWaitForARankThatStalledEndsAtItsNotice) {
  on_ranks(2, [](int r, reference::Transport& t) {
    if (r == 0) {
      const std::string why = "waited 1500 ms and nothing arrived";
      Bytes payload(why.size());
      std::memcpy(payload.data(), why.data(), why.size());
      t.send(1, Tag::make(MessageKind::stalled, 0), payload);
      return;
    }
    const auto start = std::chrono::steady_clock::now();
    try {
      (void)t.recv(0, Tag::make(MessageKind::result, 2), 60s);
      ADD_FAILURE() << "recv returned without a message";
    } catch (const reference::PeerFailed& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("rank 0 stalled: waited 1500 ms"), std::string::npos) << m;
    } catch (const Error& e) {
      ADD_FAILURE() << "not a peer's failure: " << e.what();
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, 30s) << "the notice must end the wait";
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
  EXPECT_EQ(reference::resolve_transport(reference::TransportChoice::automatic, 4),
            reference::TransportChoice::in_process);
}

// Arbitrary bit patterns, NaNs and infinities included: the exchange must not touch a bit. `tensor`
// keeps Q, K, V and O rows apart.
float row_bits(lower::Tensor tensor, int seq, std::int64_t token, int i) {
  Rng rng(static_cast<std::uint64_t>(seq) * 1000003 + static_cast<std::uint64_t>(token),
          static_cast<std::uint64_t>(i) * 16 + static_cast<std::uint64_t>(tensor));
  const auto bits = static_cast<std::uint32_t>(rng.next_u64());
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

void fill(reference::RowStore& store, const plan::Shard& shard, lower::Tensor pattern) {
  std::vector<float> values;
  for (std::int64_t tok = shard.begin; tok < shard.end; ++tok)
    for (int i = 0; i < store.width(); ++i) values.push_back(row_bits(pattern, shard.seq, tok, i));
  store.put(shard.seq, shard.begin, shard.end, values);
}

// Every row of `shard` holds `pattern`'s bits.
void expect_bits(const reference::RowStore& store, const plan::Shard& shard, lower::Tensor pattern,
                 int rank) {
  ASSERT_TRUE(store.has(shard.seq, shard.begin, shard.end)) << "rank " << rank << " seq " << shard.seq;
  const auto got = store.rows(shard.seq, shard.begin, shard.end);
  for (std::int64_t tok = shard.begin; tok < shard.end; ++tok) {
    for (int i = 0; i < store.width(); ++i) {
      const float want = row_bits(pattern, shard.seq, tok, i);
      ASSERT_EQ(std::memcmp(&got[static_cast<std::size_t>((tok - shard.begin) * store.width() + i)], &want,
                            sizeof want),
                0)
          << "rank " << rank << " seq " << shard.seq << " token " << tok << " of "
          << lower::to_string(pattern);
    }
  }
}

// Runs collective `c` on this rank: sends its messages, stores every message for it.
void exchange(reference::Transport& t, const lower::Program& program, int c, int r,
              reference::TensorRows& rows, const reference::AttentionDims& dims) {
  const std::string context = "rank " + std::to_string(r) + " collective " + std::to_string(c);
  (void)reference::send_collective(t, program, c, r, rows, dims, context);
  std::vector<int> waiting = reference::incoming_messages(program, c, r);
  while (!waiting.empty()) {
    for (auto m = waiting.begin(); m != waiting.end();) {
      const std::optional<Bytes> payload =
          t.try_recv(program.messages[static_cast<std::size_t>(*m)].src, reference::collective_tag(c));
      if (!payload) {
        ++m;
        continue;
      }
      reference::accept_collective_message(program, *m, r, *payload, rows, dims, context);
      m = waiting.erase(m);
    }
    if (!waiting.empty()) {
      ASSERT_TRUE(t.wait_for_message(5s)) << context << " got no rows";
    }
  }
}

TEST(AllToAllV, LinearToAttentionAndBackMovesEveryTokenBitForBit) {
  // A Zeppelin plan that rebalances: 2 × 8 GPUs, two long documents and two short ones.
  const Scenario s = test::small_cluster(2, 8, false);
  const CostModel cost(s.cluster, s.model);
  const plan::Plan p = make_strategy(test::system("zeppelin", {{"remap_policy", "always"}}), s, cost)
                           ->make_plan(test::batch_of({1638, 714, 9, 1}));
  ASSERT_FALSE(p.remap.empty())
      << "the plan no longer remaps this batch: pick one it does, or the test proves nothing";
  const lower::Program program = lower::lower(p, cost, {.backward = false});
  std::vector<int> to_attention, to_linear;
  std::size_t moved_slices = 0;
  for (std::size_t c = 0; c < program.collectives.size(); ++c) {
    const lower::Collective& col = program.collectives[c];
    if (col.kind != lower::CollectiveKind::all_to_all_v || col.pass != Pass::fwd) continue;
    (col.direction == plan::RemapDirection::to_attention ? to_attention : to_linear)
        .push_back(static_cast<int>(c));
    for (const int m : col.messages)
      moved_slices += program.messages[static_cast<std::size_t>(m)].slices.size();
  }
  ASSERT_FALSE(to_attention.empty());
  ASSERT_FALSE(to_linear.empty());
  ASSERT_GT(moved_slices, 0u);
  const reference::AttentionDims dims{4, 2, 8};  // Q and O rows of 32 floats, K and V of 16
  std::vector<std::int64_t> checked(static_cast<std::size_t>(p.world_size), 0);
  on_ranks(p.world_size, [&](int r, reference::Transport& t) {
    reference::TensorRows rows(dims);
    for (const auto& shard : p.linear_layout[static_cast<std::size_t>(r)].shards)
      for (const lower::Tensor x : {lower::Tensor::Q, lower::Tensor::K, lower::Tensor::V})
        fill(rows.of(x), shard, x);
    for (const int c : to_attention) exchange(t, program, c, r, rows, dims);
    // The attention layout's Q, K, V are here bit for bit; each moved slice is on its receiver only.
    for (const auto& shard : p.attention_layout[static_cast<std::size_t>(r)].shards)
      for (const lower::Tensor x : {lower::Tensor::Q, lower::Tensor::K, lower::Tensor::V})
        expect_bits(rows.of(x), shard, x, r);
    for (const int c : to_attention) {
      for (const int m : program.collectives[static_cast<std::size_t>(c)].messages) {
        const lower::Message& msg = program.messages[static_cast<std::size_t>(m)];
        for (const lower::Slice& sl : msg.slices) {
          if (msg.src == r) {
            EXPECT_FALSE(rows.of(sl.tensor).has(sl.seq, sl.begin, sl.end))
                << "rank " << r << " kept what it sent";
          }
          if (msg.dst == r) {
            EXPECT_TRUE(rows.of(sl.tensor).has(sl.seq, sl.begin, sl.end))
                << "rank " << r << " lacks what it got";
          }
        }
      }
    }
    // The attention output goes back: O rows of the attention layout, bits of their own.
    for (const auto& shard : p.attention_layout[static_cast<std::size_t>(r)].shards)
      fill(rows.of(lower::Tensor::O), shard, lower::Tensor::O);
    for (const int c : to_linear) exchange(t, program, c, r, rows, dims);
    for (const auto& shard : p.linear_layout[static_cast<std::size_t>(r)].shards) {
      if (shard.size() <= 0) continue;
      expect_bits(rows.of(lower::Tensor::O), shard, lower::Tensor::O, r);
      checked[static_cast<std::size_t>(r)] += shard.size();
    }
  });
  std::int64_t total = 0;
  for (const auto c : checked) total += c;
  EXPECT_EQ(total, 1638 + 714 + 9 + 1);
}

}  // namespace
}  // namespace zb
