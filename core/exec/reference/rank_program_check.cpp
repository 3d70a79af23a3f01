// RankRunner::check_program: what a rank checks of its own instructions before running any of them, so
// that a corrupted Program is an error naming the instruction rather than a race or a hang.
#include <algorithm>

#include "core/exec/reference/kv_collectives.hpp"
#include "core/exec/reference/rank_runner.hpp"

namespace zb::reference {
namespace {

using lower::Instr;
using lower::InstrKind;

bool is_relay_recv(const Instr& in) {
  return in.kind == InstrKind::recv && !in.last_leg;
}
bool is_first_leg(const Instr& in) {
  return in.kind == InstrKind::send && in.stream != lower::Stream::relay;
}

}  // namespace

void RankRunner::check_program() {
  const lower::Program& program = state_.in.program;
  const int rank = state_.rank;
  const int world = program.world_size;
  const auto message_count = static_cast<int>(program.messages.size());
  std::map<int, std::vector<int>>
      last_legs;  // message → what delivers it here: its last-leg recvs (or its all-gather)
  std::map<int, int> gathered_by;  // message → the K/V all-gather instruction that delivers it here
  std::map<int, int> reads_of;     // message → instructions here reading it
  for (int id = 0; id < count_; ++id) {
    const Instr& in = state_.instr(id);
    const bool backward = id >= first_backward_;
    if (in.pass != (backward ? Pass::bwd : Pass::fwd))
      fail(id, backward ? "is a forward instruction after first_backward"
                        : "is a backward instruction before first_backward");
    for (const int d : in.deps) {
      if (d < 0 || d >= id)
        fail(id,
             "depends on instr " + std::to_string(d) + ", which is not an earlier instruction of this rank");
      if (backward && d < first_backward_)
        fail(id, "depends on forward instr " + std::to_string(d) +
                     "; the pass barrier orders the passes, deps stay within one");
    }
    for (const int m : in.reads) {
      if (m < 0 || m >= message_count)
        fail(id, "reads message " + std::to_string(m) + ", which the program does not have");
      if (program.messages[static_cast<std::size_t>(m)].dst != rank)
        fail(id, "reads message " + std::to_string(m) + ", which is delivered to rank " +
                     std::to_string(program.messages[static_cast<std::size_t>(m)].dst) +
                     ", not to this rank");
      ++reads_of[m];
    }
    switch (in.kind) {
      case InstrKind::attention:
      case InstrKind::gemm:
      case InstrKind::wait:
        break;
      case InstrKind::send:
      case InstrKind::recv: {
        if (in.peer < 0 || in.peer >= world || in.peer == rank)
          fail(id, "its peer " + std::to_string(in.peer) + " is not another rank of the world of " +
                       std::to_string(world));
        if (in.message < 0 || in.message >= message_count)
          fail(id, "names message " + std::to_string(in.message) + ", which the program does not have");
        const lower::Message& m = state_.message(in.message);
        if (in.kind == InstrKind::recv) {
          if (!recv_of_.try_emplace({in.peer, in.key}, id).second)
            fail(id, "another recv of this rank has peer " + std::to_string(in.peer) + " and key " +
                         std::to_string(in.key));
          if (in.last_leg) {
            if (m.dst != rank)
              fail(id, "is a last leg of message " + std::to_string(in.message) + ", which is for rank " +
                           std::to_string(m.dst));
            last_legs[in.message].push_back(id);
            ++recv_ends_[in.message].left;
          }
        } else if (is_first_leg(in)) {
          if (m.src != rank)
            fail(id, "sends message " + std::to_string(in.message) + " of rank " + std::to_string(m.src) +
                         " as its first leg");
          ++send_ends_[in.message].left;
        } else {
          // The reference copies whole fragments: it forwards once the recv it streams from has it all.
          const int source = in.stream_from;
          const bool in_deps = std::find(in.deps.begin(), in.deps.end(), source) != in.deps.end();
          if (source < 0 || source >= id || !in_deps || !is_relay_recv(state_.instr(source)) ||
              state_.instr(source).message != in.message || state_.instr(source).offset != in.offset ||
              state_.instr(source).bytes != in.bytes) {
            fail(id, "is a relay send, but its stream_from (" + std::to_string(source) +
                         ") is not a relay recv of the same fragment among its deps");
          }
        }
        break;
      }
      case InstrKind::collective: {
        if (in.collective < 0 || static_cast<std::size_t>(in.collective) >= program.collectives.size())
          fail(id, "names collective " + std::to_string(in.collective) + ", which the program does not have");
        const lower::Collective& col = program.collectives[static_cast<std::size_t>(in.collective)];
        const std::optional<CollectiveRows> rows = collective_rows_of(col);
        if (!rows) {
          fail(id, std::string("is an ") + lower::to_string(col.kind) + " with " +
                       std::to_string(col.messages.size()) +
                       " messages; the reference moves rows only for all_to_all_v (remaps), K/V all-gathers "
                       "and their "
                       "reduce-scatters, and head all-to-alls (a collective without messages moves nothing)");
        }
        for (const int m : col.messages) {
          if (m < 0 || m >= message_count)
            fail(id,
                 "its collective lists message " + std::to_string(m) + ", which the program does not have");
          const lower::Message& msg = program.messages[static_cast<std::size_t>(m)];
          if (msg.dst == rank && !collective_in_.try_emplace({msg.src, in.collective}, m).second)
            fail(id,
                 "its collective has two messages from rank " + std::to_string(msg.src) + " to this rank");
          if (msg.dst == rank && *rows == CollectiveRows::gather) gathered_by[m] = id;
        }
        break;
      }
    }
  }
  // Buffers: one per message this rank receives (by its last legs, or inside a K/V all-gather). A reader
  // must depend (transitively) on every instruction that delivers what it reads; otherwise it could run
  // before the buffer is complete.
  for (const auto& [m, gather] : gathered_by) last_legs[m].push_back(gather);
  for (const auto& [m, legs] : last_legs) {
    Buffer& b = state_.buffers.try_emplace(m, state_.dims).first->second;
    b.fragments_left = gathered_by.contains(m) ? 0 : static_cast<int>(legs.size());
    b.readers_left = program.messages[static_cast<std::size_t>(m)].readers;
  }
  for (const auto& [m, count] : reads_of) {
    if (!last_legs.contains(m))
      fail(-1, "its instructions read message " + std::to_string(m) +
                   ", which no recv or all-gather of this rank receives");
    if (count > program.messages[static_cast<std::size_t>(m)].readers)
      fail(-1, "message " + std::to_string(m) + " has " + std::to_string(count) +
                   " readers on this rank, but the program counts " +
                   std::to_string(program.messages[static_cast<std::size_t>(m)].readers));
  }
  std::vector<int> leg_index(static_cast<std::size_t>(count_), -1);
  int legs = 0;
  for (const auto& [m, ids] : last_legs)
    for (const int id : ids)
      if (leg_index[static_cast<std::size_t>(id)] < 0)
        leg_index[static_cast<std::size_t>(id)] = legs++;  // a gather delivers many
  const std::size_t words = (static_cast<std::size_t>(legs) + 63) / 64;
  if (words == 0) return;
  std::vector<std::uint64_t> before(static_cast<std::size_t>(count_) * words,
                                    0);  // [id] → last legs it waits for
  for (int id = 0; id < count_; ++id) {
    std::uint64_t* mine = &before[static_cast<std::size_t>(id) * words];
    for (const int d : state_.instr(id).deps) {
      const std::uint64_t* theirs = &before[static_cast<std::size_t>(d) * words];
      for (std::size_t w = 0; w < words; ++w) mine[w] |= theirs[w];
      if (const int k = leg_index[static_cast<std::size_t>(d)]; k >= 0)
        mine[k / 64] |= std::uint64_t{1} << (k % 64);
    }
    for (const int m : state_.instr(id).reads) {
      for (const int leg : last_legs.at(m)) {
        const int k = leg_index[static_cast<std::size_t>(leg)];
        if ((mine[k / 64] >> (k % 64) & 1U) == 0) {
          fail(id, "reads message " + std::to_string(m) + " from rank " +
                       std::to_string(state_.message(m).src) + ", but does not depend on " +
                       state_.where(leg) + ", which delivers it (directly or transitively)");
        }
      }
    }
  }
}

}  // namespace zb::reference
