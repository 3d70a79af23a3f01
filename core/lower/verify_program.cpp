#include "core/lower/verify_program.hpp"

#include <algorithm>
#include <set>
#include <tuple>

#include "core/lower/schedule.hpp"

namespace zb::lower {
namespace {

class Checker {
 public:
  Checker(const Program& p, std::size_t max) : p_(p), max_(max) {}

  std::vector<std::string> run() {
    structure();
    if (problems_.empty()) rendezvous();
    return std::move(problems_);
  }

 private:
  bool full() const { return problems_.size() >= max_; }
  void add(int rank, int id, const std::string& what) {
    if (!full()) problems_.push_back(describe(p_, rank, id) + ": " + what);
  }

  // Every message an instruction reads must have arrived before it runs: each last leg of the message on
  // this rank is one of its dependencies, directly or transitively (else it races the recv); a message
  // that travels inside a collective (a K/V all-gather's), this rank's instruction of that collective.
  void check_reads(int r) {
    const auto& list = p_.ranks[static_cast<std::size_t>(r)].instrs;
    std::vector<int> mark(list.size(), -1);
    std::vector<int> queue;
    int stamp = 0;
    for (std::size_t i = 0; i < list.size() && !full(); ++i) {
      for (const int m : list[i].reads) {
        if (m < 0 || static_cast<std::size_t>(m) >= p_.messages.size()) {
          add(r, static_cast<int>(i), "reads message " + std::to_string(m) + ", which does not exist");
          continue;
        }
        // Walk the dependencies once per (instruction, message), until every byte of it is accounted for,
        // breadth first: the recvs are nearly always direct dependencies, and a depth-first walk went
        // through the whole ancestry of the first one first (quadratic in a 128-GPU ring's length).
        ++stamp;
        const Message& message = p_.messages[static_cast<std::size_t>(m)];
        const bool in_collective = message.collective >= 0;
        const std::int64_t needed = in_collective ? 1 : message.bytes;
        std::int64_t found = 0;
        queue.assign(list[i].deps.begin(), list[i].deps.end());
        for (std::size_t head = 0; head < queue.size() && found < needed; ++head) {
          const int d = queue[head];
          if (d < 0 || static_cast<std::size_t>(d) >= list.size() ||
              mark[static_cast<std::size_t>(d)] == stamp)
            continue;
          mark[static_cast<std::size_t>(d)] = stamp;
          const Instr& dep = list[static_cast<std::size_t>(d)];
          if (dep.kind == InstrKind::recv && dep.last_leg && dep.message == m) found += dep.bytes;
          if (in_collective && dep.kind == InstrKind::collective && dep.collective == message.collective)
            found = needed;
          queue.insert(queue.end(), dep.deps.begin(), dep.deps.end());
        }
        if (found < needed) {
          add(r, static_cast<int>(i),
              "reads message " + std::to_string(m) + " but does not wait for all of its " +
                  (in_collective ? "collective" : "recvs") + " (a race)");
        }
      }
    }
  }

  void structure() {
    std::set<std::tuple<int, int, std::uint64_t>> keys;
    std::vector<std::int64_t> delivered(p_.messages.size(), 0);
    const int world = p_.world_size;
    for (int r = 0; r < world && !full(); ++r) {
      const auto& list = p_.ranks[static_cast<std::size_t>(r)].instrs;
      for (std::size_t i = 0; i < list.size(); ++i) {
        const Instr& in = list[i];
        const int id = static_cast<int>(i);
        for (const int d : in.deps) {
          if (d < 0 || d >= id) {
            add(r, id,
                "depends on instr " + std::to_string(d) +
                    ", which is not an earlier instruction of this rank");
          } else if (list[static_cast<std::size_t>(d)].pass != in.pass) {
            add(r, id,
                "depends on instr " + std::to_string(d) + " of the other pass (the barrier orders passes)");
          }
        }
        if (in.kind == InstrKind::send || in.kind == InstrKind::recv)
          check_transfer(r, id, in, keys, delivered);
        if (in.kind == InstrKind::collective) check_member(r, id, in);
      }
    }
    for (int r = 0; r < world && !full(); ++r) check_reads(r);
    for (std::size_t m = 0; m < p_.messages.size() && !full(); ++m) {
      const Message& msg = p_.messages[m];
      if (msg.collective >= 0 || msg.purpose == Purpose::remap) continue;  // delivered inside its collective
      if (delivered[m] != msg.bytes) {
        add(msg.dst, -1,
            "message " + std::to_string(m) + " (" + to_string(msg.purpose) + " from rank " +
                std::to_string(msg.src) + ") delivers " + std::to_string(delivered[m]) + " of its " +
                std::to_string(msg.bytes) + " bytes");
      }
    }
    for (std::size_t c = 0; c < p_.collectives.size() && !full(); ++c) {
      const Collective& col = p_.collectives[c];
      for (std::size_t k = 0; k < col.ranks.size(); ++k) {
        const int r = col.ranks[k], i = col.instrs[k];
        if (r < 0 || r >= world || i < 0 ||
            static_cast<std::size_t>(i) >= p_.ranks[static_cast<std::size_t>(r)].instrs.size() ||
            p_.instr(r, i).collective != static_cast<int>(c)) {
          add(r, i, "collective " + std::to_string(c) + " lists it as a member's instruction, but it is not");
        }
      }
    }
  }

  void check_transfer(int r, int id, const Instr& in, std::set<std::tuple<int, int, std::uint64_t>>& keys,
                      std::vector<std::int64_t>& delivered) {
    if (in.peer < 0 || in.peer >= p_.world_size || in.peer == r)
      return add(r, id, "its peer is not another rank");
    if (in.message < 0 || static_cast<std::size_t>(in.message) >= p_.messages.size())
      return add(r, id, "names no message");
    const auto& peer_list = p_.ranks[static_cast<std::size_t>(in.peer)].instrs;
    if (in.match < 0 || static_cast<std::size_t>(in.match) >= peer_list.size()) {
      return add(r, id,
                 "has no matching " + std::string(in.kind == InstrKind::send ? "recv" : "send") +
                     " on rank " + std::to_string(in.peer));
    }
    const Instr& other = peer_list[static_cast<std::size_t>(in.match)];
    const bool is_send = in.kind == InstrKind::send;
    if (other.kind != (is_send ? InstrKind::recv : InstrKind::send) || other.peer != r || other.match != id) {
      return add(r, id, "its counterpart " + describe(p_, in.peer, in.match) + " does not point back at it");
    }
    if (other.message != in.message || other.offset != in.offset || other.bytes != in.bytes ||
        other.key != in.key || other.chunks != in.chunks) {
      return add(r, id,
                 "disagrees with its counterpart " + describe(p_, in.peer, in.match) +
                     " on message, fragment, chunks or key");
    }
    if (in.chunks < 1 || (in.bytes > 0 && in.chunks > in.bytes)) {
      return add(
          r, id,
          "cuts its " + std::to_string(in.bytes) + " bytes into " + std::to_string(in.chunks) + " chunks");
    }
    if (in.stream_from >= 0) check_stream(r, id, in);
    if (is_send && !keys.emplace(r, in.peer, in.key).second) {
      add(r, id,
          "reuses match key " + std::to_string(in.key) + " between rank " + std::to_string(r) + " and rank " +
              std::to_string(in.peer));
    }
    if (!is_send && in.last_leg) delivered[static_cast<std::size_t>(in.message)] += in.bytes;
  }

  // A streamed relay send forwards, chunk for chunk, a relay recv of the same fragment it depends on.
  void check_stream(int r, int id, const Instr& in) {
    const auto& list = p_.ranks[static_cast<std::size_t>(r)].instrs;
    const int from = in.stream_from;
    const bool listed = std::find(in.deps.begin(), in.deps.end(), from) != in.deps.end();
    if (in.kind != InstrKind::send || from >= id || !listed) {
      return add(r, id,
                 "streams from instr " + std::to_string(from) + ", which is not a dependency of this send");
    }
    const Instr& src = list[static_cast<std::size_t>(from)];
    if (src.kind != InstrKind::recv || src.last_leg || src.message != in.message || src.offset != in.offset ||
        src.bytes != in.bytes || src.chunks != in.chunks) {
      add(r, id,
          "streams from " + describe(p_, r, from) +
              ", which is not a relay recv of the same fragment and chunks");
    }
  }

  void check_member(int r, int id, const Instr& in) {
    if (in.collective < 0 || static_cast<std::size_t>(in.collective) >= p_.collectives.size())
      return add(r, id, "names no collective");
    const Collective& col = p_.collectives[static_cast<std::size_t>(in.collective)];
    for (std::size_t k = 0; k < col.ranks.size(); ++k) {
      if (col.ranks[k] == r && col.instrs[k] == id) return;
    }
    add(r, id, "is not among the members of collective " + std::to_string(in.collective));
  }

  void rendezvous() {
    // Zero buffering: a send completes only when its recv is posted. The scheduler implements exactly
    // that, so whatever it cannot run is deadlocked.
    const Schedule s = schedule(p_, free_transfers());
    if (s.complete) return;
    for (const auto& [r, i] : s.posted_stuck) {
      if (full()) break;
      const Instr& in = p_.instr(r, i);
      if (in.kind == InstrKind::collective) {
        add(r, i, "deadlock: posted, but not every member of its collective ever posts");
      } else {
        add(r, i,
            "deadlock: posted, but its counterpart " + describe(p_, in.peer, in.match) +
                " is never posted (with unbuffered sends, as NCCL's, the ranks wait for each other in a "
                "cycle)");
      }
    }
    if (s.posted_stuck.empty() && !s.stuck.empty())
      add(s.stuck.front().first, s.stuck.front().second, "deadlock: never runs");
  }

  const Program& p_;
  std::size_t max_;
  std::vector<std::string> problems_;
};

}  // namespace

std::vector<std::string> verify(const Program& program, std::size_t max_problems) {
  return Checker(program, max_problems).run();
}

}  // namespace zb::lower
