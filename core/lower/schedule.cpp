#include "core/lower/schedule.hpp"

#include <algorithm>
#include <functional>
#include <queue>

namespace zb::lower {

TransferModel free_transfers() {
  TransferModel free;
  free.p2p = [](int, int, std::int64_t, const Message&) { return 0.0; };
  free.collective = [](const Collective&) { return 0.0; };
  return free;
}

namespace {

// Per-instruction state lives in one flat array of 64-byte records indexed by a global id (the rank's
// offset plus the instruction's index): drain visits completions in time order across all ranks, and a
// completion touches its own record and its successors', so one cache line each instead of one per field.
class Scheduler {
 public:
  Scheduler(const Program& program, const TransferModel& model, ScheduleDetail detail)
      : p_(program), model_(model), detail_(detail) {}

  Schedule run() {
    init();
    // Everything with nothing to wait for is posted at time zero, in rank then list order.
    for (std::size_t r = 0; r < p_.ranks.size(); ++r) {
      for (std::size_t i = 0; i < p_.ranks[r].instrs.size(); ++i) {
        if (node_[gid(static_cast<int>(r), static_cast<int>(i))].pending == 0)
          post(static_cast<int>(r), static_cast<int>(i));
      }
    }
    drain();
    if (forward_left_ == 0 && !barrier_done_) open_barrier();
    drain();
    finish();
    return std::move(s_);
  }

 private:
  std::size_t gid(int r, int i) const {
    return offset_[static_cast<std::size_t>(r)] + static_cast<std::size_t>(i);
  }

  void init() {
    link_free_.assign(static_cast<std::size_t>(std::max(0, model_.link_count)), 0.0);
    const std::size_t n = p_.ranks.size();
    offset_.assign(n + 1, 0);
    for (std::size_t r = 0; r < n; ++r) offset_[r + 1] = offset_[r] + p_.ranks[r].instrs.size();
    const std::size_t total = offset_[n];
    node_.resize(total);
    if (detail_ == ScheduleDetail::every_instruction) start_.assign(total, -1.0);
    bytes_.resize(total);
    // Successors in CSR form over global ids: dependency edges plus the compute stream's chain.
    std::vector<int> count(total + 1, 0), chain(total, -1);
    for (std::size_t r = 0; r < n; ++r) {
      const auto& list = p_.ranks[r].instrs;
      const std::size_t base = offset_[r];
      int previous_compute = -1;
      for (std::size_t i = 0; i < list.size(); ++i) {
        const std::size_t g = base + i;
        const Instr& in = list[i];
        Node& node = node_[g];
        node.seconds = in.seconds;
        node.peer = in.peer;
        node.match = in.match;
        node.ref = in.kind == InstrKind::collective ? in.collective : in.message;
        node.stream_from = in.stream_from;
        node.chunks = in.chunks;
        node.kind = in.kind;
        node.forward = in.pass == Pass::fwd;
        bytes_[g] = in.bytes;
        for (const int d : in.deps) ++count[base + static_cast<std::size_t>(d)];
        node.pending = static_cast<int>(in.deps.size());
        if (is_compute(in)) {
          if (previous_compute >= 0) {
            chain[g] = previous_compute;
            ++count[base + static_cast<std::size_t>(previous_compute)];
            ++node.pending;
          }
          previous_compute = static_cast<int>(i);
        }
        if (in.pass == Pass::bwd) {
          ++node.pending;  // the barrier
          backward_.emplace_back(static_cast<int>(r), static_cast<int>(i));
        } else {
          ++forward_left_;
        }
      }
    }
    succ_begin_.assign(total + 1, 0);
    for (std::size_t g = 0; g < total; ++g) succ_begin_[g + 1] = succ_begin_[g] + count[g];
    succ_.assign(static_cast<std::size_t>(succ_begin_[total]), 0);
    std::vector<int> fill(succ_begin_.begin(), succ_begin_.end() - 1);
    for (std::size_t r = 0; r < n; ++r) {
      const auto& list = p_.ranks[r].instrs;
      const std::size_t base = offset_[r];
      for (std::size_t i = 0; i < list.size(); ++i) {
        for (const int d : list[i].deps)
          succ_[static_cast<std::size_t>(fill[base + static_cast<std::size_t>(d)]++)] = static_cast<int>(i);
        if (chain[base + i] >= 0)
          succ_[static_cast<std::size_t>(fill[base + static_cast<std::size_t>(chain[base + i])]++)] =
              static_cast<int>(i);
      }
    }
    // Collectives: how many members have posted, and (all_to_all_v) each member's messages, with the
    // positions of both ends, and how many are still open.
    const std::size_t nc = p_.collectives.size();
    arrived_.assign(nc, 0);
    if (model_.links) shared_seconds_.assign(p_.messages.size(), 0.0);
    open_messages_.resize(nc);
    member_end_.resize(nc);
    member_messages_.resize(nc);
    member_pos_.resize(nc);
    std::vector<int> pos_of(p_.ranks.size(), -1);
    for (std::size_t c = 0; c < nc; ++c) {
      const Collective& col = p_.collectives[c];
      for (std::size_t k = 0; k < col.ranks.size(); ++k)
        pos_of[static_cast<std::size_t>(col.ranks[k])] = static_cast<int>(k);
      open_messages_[c].assign(col.ranks.size(), 0);
      member_end_[c].assign(col.ranks.size(), 0.0);
      member_messages_[c].resize(col.ranks.size());
      for (const int m : col.messages) {
        const Message& msg = p_.messages[static_cast<std::size_t>(m)];
        const auto a = static_cast<std::size_t>(pos_of[static_cast<std::size_t>(msg.src)]);
        const auto b = static_cast<std::size_t>(pos_of[static_cast<std::size_t>(msg.dst)]);
        ++open_messages_[c][a];
        ++open_messages_[c][b];
        member_messages_[c][a].push_back({m, static_cast<int>(b)});
        member_messages_[c][b].push_back({m, static_cast<int>(a)});
      }
      share_links(col);
      member_pos_[c].reserve(col.ranks.size());
      for (std::size_t k = 0; k < col.ranks.size(); ++k) {
        member_pos_[c].emplace_back(col.ranks[k], static_cast<int>(k));
        pos_of[static_cast<std::size_t>(col.ranks[k])] = -1;
      }
      std::sort(member_pos_[c].begin(), member_pos_[c].end());
    }
  }

  std::size_t member(std::size_t c, int rank) const {
    const auto& v = member_pos_[c];
    const auto it = std::lower_bound(v.begin(), v.end(), std::make_pair(rank, -1));
    return static_cast<std::size_t>(it->second);
  }

  void post(int r, int i) {
    const std::size_t g = gid(r, i);
    Node& in = node_[g];
    in.posted = true;
    const double ready = in.ready;
    switch (in.kind) {
      case InstrKind::attention:
      case InstrKind::gemm:
        resolve(r, i, ready, ready + in.seconds);
        break;
      case InstrKind::wait:
        resolve(r, i, ready, ready);
        break;
      case InstrKind::send:
      case InstrKind::recv: {
        if (in.peer < 0 || in.match < 0) return;  // unmatched: never completes (the verifier says why)
        const std::size_t other = gid(in.peer, in.match);
        const Node& peer = node_[other];
        if (!peer.posted) return;
        const double start = std::max(ready, peer.ready);
        const bool is_send = in.kind == InstrKind::send;
        const int src = is_send ? r : in.peer, dst = is_send ? in.peer : r;
        const Node& send = is_send ? in : peer;
        // Chunks leave one after the other; a streamed relay's chunk c also waits for chunk c of its recv.
        // With both ends' chunk times linear in c, the first and last chunk bound every chunk exactly.
        const Message& message = p_.messages[static_cast<std::size_t>(in.ref)];
        const int chunks = std::max(1, send.chunks);
        const double chunk = model_.p2p(src, dst, bytes_[g] / chunks, message);
        const double begin = claim_links(src, dst, message, start);
        const double first = begin + chunk;
        double end = begin + chunks * chunk;
        // A streamed relay leg that waits on its source occupies its links only for its own chunks.
        hold_links(end);
        const int stream_from = send.stream_from;
        if (stream_from >= 0) end = std::max(end, node_[gid(src, stream_from)].end + chunk);
        const int peer_rank = in.peer, peer_instr = in.match;
        resolve(r, i, start, end, first);
        resolve(peer_rank, peer_instr, start, end, first);
        break;
      }
      case InstrKind::collective:
        post_collective(r, i, ready);
        break;
    }
  }

  void post_collective(int r, int i, double ready) {
    const auto c = static_cast<std::size_t>(node_[gid(r, i)].ref);
    const Collective& col = p_.collectives[c];
    ++arrived_[c];
    if (col.kind != CollectiveKind::all_to_all_v) {
      if (arrived_[c] != static_cast<int>(col.ranks.size())) return;
      double start = 0;
      for (std::size_t k = 0; k < col.ranks.size(); ++k)
        start = std::max(start, node_[gid(col.ranks[k], col.instrs[k])].ready);
      const double end = start + model_.collective(col);
      for (std::size_t k = 0; k < col.ranks.size(); ++k) resolve(col.ranks[k], col.instrs[k], start, end);
      return;
    }
    // all_to_all_v: each message moves once both its ends have posted.
    const std::size_t me = member(c, r);
    member_end_[c][me] = std::max(member_end_[c][me], ready);
    for (const auto& [m, other_pos] : member_messages_[c][me]) {
      const Message& msg = p_.messages[static_cast<std::size_t>(m)];
      const auto other = static_cast<std::size_t>(other_pos);
      const int other_instr = col.instrs[other];
      if (other_instr < 0) continue;
      const Node& peer = node_[gid(col.ranks[other], other_instr)];
      if (!peer.posted) continue;
      const double start = std::max(ready, peer.ready);
      // With a link model, sharing its links with the collective's other messages (share_links), behind
      // no queue of its own; later legs on those links wait for it.
      const double end = start + (model_.links ? shared_seconds_[static_cast<std::size_t>(m)]
                                               : model_.p2p(msg.src, msg.dst, msg.bytes, msg));
      links_of(msg.src, msg.dst, msg);
      hold_links(end);
      for (const std::size_t k : {me, other}) {
        member_end_[c][k] = std::max(member_end_[c][k], end);
        if (--open_messages_[c][k] == 0) maybe_finish_member(c, k);
      }
    }
    maybe_finish_member(c, me);
  }

  void maybe_finish_member(std::size_t c, std::size_t k) {
    const Collective& col = p_.collectives[c];
    const int r = col.ranks[k], i = col.instrs[k];
    if (i < 0 || open_messages_[c][k] != 0) return;
    const Node& node = node_[gid(r, i)];
    if (!node.posted || node.end >= 0) return;
    resolve(r, i, node.ready, std::max(node.ready, member_end_[c][k]));
  }

  // An all_to_all_v's messages move at once and share the links they hold, as a network's bandwidth
  // sharing would: each takes as long as the busiest of its links needs for all the collective's messages
  // on it (a message alone on its links takes its own time). Queueing them first come, first served
  // instead chains them through alternating send and receive sides (a→b holds b's receive side, then c→b
  // c's send side, then c→d ...), a convoy no network shows: a 1024-GPU remap, whose busiest link carries
  // 7 ms of its traffic, took 1.7 s so, and the planner turned the remap down wherever it ran at scale.
  void share_links(const Collective& col) {
    if (!model_.links || col.kind != CollectiveKind::all_to_all_v) return;
    touched_.clear();
    if (load_.size() != static_cast<std::size_t>(model_.link_count))
      load_.assign(static_cast<std::size_t>(model_.link_count), 0.0);
    for (const int m : col.messages) {
      const Message& msg = p_.messages[static_cast<std::size_t>(m)];
      links_of(msg.src, msg.dst, msg);
      const double seconds = model_.p2p(msg.src, msg.dst, msg.bytes, msg);
      shared_seconds_[static_cast<std::size_t>(m)] = seconds;
      for (const int l : held_) {
        if (load_[static_cast<std::size_t>(l)] == 0.0) touched_.push_back(l);
        load_[static_cast<std::size_t>(l)] += seconds;
      }
    }
    for (const int m : col.messages) {
      const Message& msg = p_.messages[static_cast<std::size_t>(m)];
      links_of(msg.src, msg.dst, msg);
      double& shared = shared_seconds_[static_cast<std::size_t>(m)];
      for (const int l : held_) shared = std::max(shared, load_[static_cast<std::size_t>(l)]);
    }
    for (const int l : touched_) load_[static_cast<std::size_t>(l)] = 0.0;
  }

  // The links (the model's) a leg of `message` from src to dst holds, in held_ (none without a link model).
  void links_of(int src, int dst, const Message& message) {
    held_.clear();
    if (model_.links) model_.links(src, dst, message, held_);
  }
  // The time a leg ready at `start` can begin once the links it holds are free; remembers them for
  // hold_links. Without a link model, `start`.
  double claim_links(int src, int dst, const Message& message, double start) {
    links_of(src, dst, message);
    for (const int l : held_) start = std::max(start, link_free_[static_cast<std::size_t>(l)]);
    return start;
  }
  // The links in held_ are busy until `end` (never earlier than they already were: an all_to_all_v's
  // messages claim none and may end before another of its messages on the same link).
  void hold_links(double end) {
    for (const int l : held_)
      link_free_[static_cast<std::size_t>(l)] = std::max(link_free_[static_cast<std::size_t>(l)], end);
  }

  // `first`: when a chunked transfer's first chunk has arrived (what a streamed relay send waits for).
  void resolve(int r, int i, double start, double end, double first = -1) {
    const std::size_t g = gid(r, i);
    Node& node = node_[g];
    if (node.end >= 0) return;
    if (!start_.empty()) start_[g] = start;
    node.end = end;
    node.first = first < 0 ? end : first;
    done_.push({end, order_++, r, i});
  }

  // Completions in time order (ties in the order they were resolved), so that legs claim shared links
  // in the order they become ready.
  void drain() {
    while (!done_.empty()) {
      const Completion top = done_.top();
      done_.pop();
      const int r = top.rank, i = top.instr;
      const std::size_t g = gid(r, i);
      const Node& node = node_[g];
      const double end = node.end, first = node.first;
      if (node.forward) {
        s_.barrier = std::max(s_.barrier, end);
        if (--forward_left_ == 0) open_barrier();
      }
      const std::size_t base = offset_[static_cast<std::size_t>(r)];
      for (int k = succ_begin_[g]; k < succ_begin_[g + 1]; ++k) {
        const int next = succ_[static_cast<std::size_t>(k)];
        release(r, next, node_[base + static_cast<std::size_t>(next)].stream_from == i ? first : end);
      }
    }
  }

  void release(int r, int i, double time) {
    Node& node = node_[gid(r, i)];
    node.ready = std::max(node.ready, time);
    if (--node.pending == 0) post(r, i);
  }

  void open_barrier() {
    if (barrier_done_) return;
    barrier_done_ = true;
    for (const auto& [r, i] : backward_) release(r, i, s_.barrier);
  }

  void finish() {
    const std::size_t n = p_.ranks.size();
    const bool every = detail_ == ScheduleDetail::every_instruction;
    if (every) {
      s_.start.resize(n);
      s_.end.resize(n);
    }
    s_.rank_forward_finish.assign(n, 0.0);
    for (std::size_t r = 0; r < n; ++r) {
      const std::size_t count = offset_[r + 1] - offset_[r];
      if (every) {
        s_.start[r].assign(start_.begin() + static_cast<std::ptrdiff_t>(offset_[r]),
                           start_.begin() + static_cast<std::ptrdiff_t>(offset_[r + 1]));
        s_.end[r].resize(count);
      }
      const auto first_backward = static_cast<std::size_t>(p_.ranks[r].first_backward);
      for (std::size_t i = 0; i < count; ++i) {
        const Node& node = node_[offset_[r] + i];
        if (every) s_.end[r][i] = node.end;
        if (i < first_backward) s_.rank_forward_finish[r] = std::max(s_.rank_forward_finish[r], node.end);
        if (node.end < 0) {
          s_.complete = false;
          s_.stuck.emplace_back(static_cast<int>(r), static_cast<int>(i));
          if (node.posted) s_.posted_stuck.emplace_back(static_cast<int>(r), static_cast<int>(i));
        } else {
          s_.finish = std::max(s_.finish, node.end);
        }
      }
    }
  }

  // A completion: (end, resolve order) orders the heap; rank and instruction say whose.
  struct Completion {
    double end;
    long order;
    int rank, instr;
    bool operator>(const Completion& o) const { return end != o.end ? end > o.end : order > o.order; }
  };

  const Program& p_;
  const TransferModel& model_;
  ScheduleDetail detail_;
  Schedule s_;
  std::vector<std::size_t> offset_;  // [rank] → global id of its first instruction; [ranks] = total
  // What the scheduler reads and writes of one instruction, in one 64-byte record.
  struct Node {
    double ready = 0;    // when its last dependency was done
    double end = -1;     // −1 until resolved
    double first = -1;   // when the first chunk arrived (a streamed relay send waits for it)
    double seconds = 0;  // compute duration
    int peer = -1, match = -1;
    int ref = -1;  // send / recv: its message; collective: its collective
    int stream_from = -1;
    int pending = 0;  // dependencies (and the compute chain, and the barrier) not yet done
    int chunks = 1;
    InstrKind kind = InstrKind::wait;
    bool posted = false;
    bool forward = true;
  };
  std::vector<Node> node_;
  std::vector<double> start_;           // written once, read by finish (every_instruction only)
  std::vector<std::int64_t> bytes_;     // transfers: the leg's bytes
  std::vector<int> succ_begin_, succ_;  // successors (instruction ids of the same rank) in CSR form
  std::priority_queue<Completion, std::vector<Completion>, std::greater<>> done_;
  long order_ = 0;
  std::vector<double> link_free_;
  std::vector<double> shared_seconds_;  // [message]: an all_to_all_v message's time sharing its links
  std::vector<double> load_;            // [link]: scratch of share_links, zero between collectives
  std::vector<int> touched_;            // links share_links loaded
  std::vector<int> held_;
  std::vector<std::pair<int, int>> backward_;
  long forward_left_ = 0;
  bool barrier_done_ = false;
  std::vector<int> arrived_;
  std::vector<std::vector<int>> open_messages_;
  std::vector<std::vector<double>> member_end_;
  std::vector<std::vector<std::vector<std::pair<int, int>>>>
      member_messages_;                                       // [c][member] → (message, other end)
  std::vector<std::vector<std::pair<int, int>>> member_pos_;  // [c] → sorted (rank, member)
};

}  // namespace

Schedule schedule(const Program& program, const TransferModel& model, ScheduleDetail detail) {
  return Scheduler(program, model, detail).run();
}

}  // namespace zb::lower
