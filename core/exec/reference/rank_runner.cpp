#include "core/exec/reference/rank_runner.hpp"

#include <algorithm>
#include <cstring>

#include "core/exec/reference/all_to_all_v.hpp"
#include "core/exec/reference/attention_op.hpp"
#include "core/exec/reference/wire.hpp"
#include "kernels/gemm.hpp"

namespace zb::reference {
namespace {

using lower::Instr;
using lower::InstrKind;

std::string rank_list(const std::vector<int>& ranks) {
  std::string text;
  for (const int r : ranks) text += (text.empty() ? "" : ", ") + std::to_string(r);
  return text;
}

// The header every leg carries, so that the receiver can tell a leg that reached the wrong recv.
struct LegHeader {
  std::int64_t message = -1;
  std::int64_t offset = 0, bytes = 0;  // the fragment of the message's modelled size
};

Bytes encode_leg(const LegHeader& header, std::span<const std::byte> data) {
  ByteWriter w;
  w.put(header);
  w.put_span<std::byte>(data);
  return w.take();
}

std::string fragment_text(const LegHeader& h) {
  return "message " + std::to_string(h.message) + " fragment [" + std::to_string(h.offset) + ", " +
         std::to_string(h.offset + h.bytes) + ")";
}

std::string leg_text(const Bytes& payload) {
  try {
    ByteReader r(payload);
    return fragment_text(r.get<LegHeader>());
  } catch (const std::exception&) {
    return "a malformed leg";
  }
}

bool is_relay_recv(const Instr& in) { return in.kind == InstrKind::recv && !in.last_leg; }
bool is_first_leg(const Instr& in) { return in.kind == InstrKind::send && in.stream != lower::Stream::relay; }

}  // namespace

RankRunner::RankRunner(const RunInputs& inputs, int rank, Transport& transport) : state_(inputs, rank), transport_(transport) {
  const lower::RankProgram& mine = inputs.program.ranks.at(static_cast<std::size_t>(rank));
  count_ = std::clamp(mine.first_backward, 0, static_cast<int>(mine.instrs.size()));
  status_.assign(static_cast<std::size_t>(count_), Status::waiting);
  posted_at_.assign(static_cast<std::size_t>(count_), 0.0);
  check_program();
}

void RankRunner::fail(int id, const std::string& what) const {
  throw Error(ExitCode::runtime, rank_location(state_.rank), (id >= 0 ? state_.where(id) + ": " : std::string()) + what);
}

void RankRunner::check_program() {
  const lower::Program& program = state_.in.program;
  const int rank = state_.rank;
  const int world = program.world_size;
  const auto message_count = static_cast<int>(program.messages.size());
  std::map<int, std::vector<int>> last_legs;  // message → this rank's last-leg recvs of it
  std::map<int, int> reads_of;                // message → forward instructions here reading it
  for (int id = 0; id < count_; ++id) {
    const Instr& in = state_.instr(id);
    if (in.pass != Pass::fwd) fail(id, "is a backward instruction before first_backward");
    for (const int d : in.deps)
      if (d < 0 || d >= id) fail(id, "depends on instr " + std::to_string(d) + ", which is not an earlier instruction of this rank");
    for (const int m : in.reads) {
      if (m < 0 || m >= message_count) fail(id, "reads message " + std::to_string(m) + ", which the program does not have");
      if (program.messages[static_cast<std::size_t>(m)].dst != rank)
        fail(id, "reads message " + std::to_string(m) + ", which is delivered to rank " +
                     std::to_string(program.messages[static_cast<std::size_t>(m)].dst) + ", not to this rank");
      ++reads_of[m];
    }
    switch (in.kind) {
      case InstrKind::attention:
      case InstrKind::gemm:
      case InstrKind::wait: break;
      case InstrKind::send:
      case InstrKind::recv: {
        if (in.peer < 0 || in.peer >= world || in.peer == rank)
          fail(id, "its peer " + std::to_string(in.peer) + " is not another rank of the world of " + std::to_string(world));
        if (in.message < 0 || in.message >= message_count) fail(id, "names message " + std::to_string(in.message) + ", which the program does not have");
        const lower::Message& m = state_.message(in.message);
        if (in.kind == InstrKind::recv) {
          if (!recv_of_.try_emplace({in.peer, in.key}, id).second)
            fail(id, "another recv of this rank has peer " + std::to_string(in.peer) + " and key " + std::to_string(in.key));
          if (in.last_leg) {
            if (m.dst != rank) fail(id, "is a last leg of message " + std::to_string(in.message) + ", which is for rank " + std::to_string(m.dst));
            last_legs[in.message].push_back(id);
            ++recv_ends_[in.message].left;
          }
        } else if (is_first_leg(in)) {
          if (m.src != rank) fail(id, "sends message " + std::to_string(in.message) + " of rank " + std::to_string(m.src) + " as its first leg");
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
          relay_source_[id] = source;
        }
        break;
      }
      case InstrKind::collective: {
        if (in.collective < 0 || static_cast<std::size_t>(in.collective) >= program.collectives.size())
          fail(id, "names collective " + std::to_string(in.collective) + ", which the program does not have");
        const lower::Collective& col = program.collectives[static_cast<std::size_t>(in.collective)];
        if (col.kind != lower::CollectiveKind::all_to_all_v) {
          fail(id, std::string("is an ") + lower::to_string(col.kind) +
                       "; the reference backend runs only all_to_all_v collectives (the remaps)");
        }
        for (const int m : col.messages) {
          if (m < 0 || m >= message_count) fail(id, "its collective lists message " + std::to_string(m) + ", which the program does not have");
          const lower::Message& msg = program.messages[static_cast<std::size_t>(m)];
          if (msg.dst == rank && !collective_in_.try_emplace({msg.src, in.collective}, m).second)
            fail(id, "its collective has two messages from rank " + std::to_string(msg.src) + " to this rank");
        }
        break;
      }
    }
  }
  // Buffers: one per message this rank receives. A reader must depend (transitively) on every recv
  // that delivers what it reads; otherwise it could run before the buffer is complete.
  for (const auto& [m, legs] : last_legs) {
    Buffer& b = state_.buffers.try_emplace(m, state_.dims).first->second;
    b.fragments_left = static_cast<int>(legs.size());
    b.readers_left = program.messages[static_cast<std::size_t>(m)].readers;
  }
  for (const auto& [m, count] : reads_of) {
    if (!last_legs.contains(m))
      fail(-1, "its instructions read message " + std::to_string(m) + ", which no recv of this rank receives");
    if (count > program.messages[static_cast<std::size_t>(m)].readers)
      fail(-1, "message " + std::to_string(m) + " has " + std::to_string(count) + " readers on this rank, but the program counts " +
                   std::to_string(program.messages[static_cast<std::size_t>(m)].readers));
  }
  std::vector<int> leg_index(static_cast<std::size_t>(count_), -1);
  int legs = 0;
  for (const auto& [m, ids] : last_legs)
    for (const int id : ids) leg_index[static_cast<std::size_t>(id)] = legs++;
  const std::size_t words = (static_cast<std::size_t>(legs) + 63) / 64;
  if (words == 0) return;
  std::vector<std::uint64_t> before(static_cast<std::size_t>(count_) * words, 0);  // [id] → last legs it waits for
  for (int id = 0; id < count_; ++id) {
    std::uint64_t* mine = &before[static_cast<std::size_t>(id) * words];
    for (const int d : state_.instr(id).deps) {
      const std::uint64_t* theirs = &before[static_cast<std::size_t>(d) * words];
      for (std::size_t w = 0; w < words; ++w) mine[w] |= theirs[w];
      if (const int k = leg_index[static_cast<std::size_t>(d)]; k >= 0) mine[k / 64] |= std::uint64_t{1} << (k % 64);
    }
    for (const int m : state_.instr(id).reads) {
      for (const int leg : last_legs.at(m)) {
        const int k = leg_index[static_cast<std::size_t>(leg)];
        if ((mine[k / 64] >> (k % 64) & 1U) == 0) {
          fail(id, "reads message " + std::to_string(m) + " from rank " + std::to_string(state_.message(m).src) +
                       ", but does not depend on " + state_.where(leg) + ", which delivers it (directly or transitively)");
        }
      }
    }
  }
}

bool RankRunner::deps_done(int id) const {
  const auto& deps = state_.instr(id).deps;
  return std::all_of(deps.begin(), deps.end(), [&](int d) { return status_[static_cast<std::size_t>(d)] == Status::done; });
}

RankResult RankRunner::run() {
  const std::chrono::milliseconds timeout = state_.in.options.receive_timeout;
  const auto count = static_cast<std::size_t>(count_);
  std::size_t first_open = 0;  // instructions before it are all done
  while (first_open < count) {
    check_aborted();
    bool progress = collect_arrivals();
    for (std::size_t i = first_open; i < count; ++i) {
      const int id = static_cast<int>(i);
      if (status_[i] != Status::done && !lower::is_compute(state_.instr(id)) && deps_done(id)) progress |= advance_comm(id);
    }
    while (next_compute_ < count &&
           (!lower::is_compute(state_.instr(static_cast<int>(next_compute_))) || status_[next_compute_] == Status::done))
      ++next_compute_;
    if (next_compute_ < count && deps_done(static_cast<int>(next_compute_))) {
      run_compute(static_cast<int>(next_compute_));
      progress = true;
    }
    while (first_open < count && status_[first_open] == Status::done) ++first_open;
    if (!progress && first_open < count && !transport_.wait_for_message(timeout)) stalled();
  }
  say_finished_and_wait_for_all();
  collect_arrivals();  // every rank has sent all it will: anything arriving now is a stray (it throws)
  RankResult result;
  result.rank = state_.rank;
  result.verification = verify_outputs(state_, state_.in.options.tolerance);
  if (!state_.in.options.dump_dir.empty()) dump_outputs(state_, state_.in.options.dump_dir);
  result.events = std::move(state_.events);
  return result;
}

bool RankRunner::advance_comm(int id) {
  const auto i = static_cast<std::size_t>(id);
  bool progress = false;
  if (status_[i] == Status::waiting) {
    status_[i] = Status::posted;
    posted_at_[i] = state_.seconds_since_start();
    progress = true;
  }
  switch (state_.instr(id).kind) {
    case InstrKind::send:
      send_leg(id);
      return true;
    case InstrKind::recv:
      return complete_recv(id) || progress;
    case InstrKind::collective:
      return advance_collective(id) || progress;
    case InstrKind::wait:  // an event join: done once posted
      done(id);
      return true;
    default:
      return progress;
  }
}

void RankRunner::send_leg(int id) {
  const Instr& in = state_.instr(id);
  const lower::Message& m = state_.message(in.message);
  const LegHeader header{in.message, in.offset, in.bytes};
  const Tag tag = Tag::make(MessageKind::transfer, in.key);
  if (in.stream == lower::Stream::relay) {  // forward what the relay recv got, bit for bit
    const int source = relay_source_.at(id);
    const auto it = relayed_.find(source);
    if (it == relayed_.end()) fail(id, "its relay recv " + state_.where(source) + " holds no fragment");
    const Relayed relayed = std::move(it->second);
    relayed_.erase(it);
    transport_.send(in.peer, tag, encode_leg(header, relayed.bytes));
    state_.record(id, Stream::nic, in.leg == lower::LegRole::nic ? EventCategory::route_nic : EventCategory::route_combine,
                  relayed.arrived, static_cast<double>(relayed.bytes.size()), 0, state_.instr(source).peer);
    done(id);
    return;
  }
  auto [out, first] = outgoing_.try_emplace(in.message);
  MessageEnd& end = send_ends_.at(in.message);
  if (first) {  // pack the whole message once; its first legs cut their fragments out of it
    const std::vector<const TensorRows*> sources = state_.sources(id);
    if (const auto missing = pack_payload(m, state_.dims, sources, out->second.payload)) {
      fail(id, "cannot send message " + std::to_string(in.message) + " to rank " + std::to_string(m.dst) + ": " +
                   slice_text(m.slices[missing->slice]) + ", token " + std::to_string(missing->token) +
                   " is neither on this rank nor in a buffer of the messages this instruction reads");
    }
    out->second.left = end.left;
    end.start = posted_at_[static_cast<std::size_t>(id)];
  }
  const Bytes& payload = out->second.payload;
  const ByteRange range = real_fragment(m, payload.size(), in.offset, in.bytes);
  transport_.send(in.peer, tag, encode_leg(header, std::span<const std::byte>(payload).subspan(range.begin, range.size())));
  end.start = std::min(end.start, posted_at_[static_cast<std::size_t>(id)]);
  if (--out->second.left == 0) {
    state_.record(id, Stream::comm, EventCategory::send, end.start, static_cast<double>(payload.size()), 0, m.dst);
    outgoing_.erase(out);
  }
  done(id);
}

bool RankRunner::complete_recv(int id) {
  const auto it = arrived_.find(id);
  if (it == arrived_.end()) return false;
  const Bytes leg = std::move(it->second);
  arrived_.erase(it);
  const Instr& in = state_.instr(id);
  const lower::Message& m = state_.message(in.message);
  ByteReader r(leg);
  const auto header = r.get<LegHeader>();
  const LegHeader expected{in.message, in.offset, in.bytes};
  if (header.message != expected.message || header.offset != expected.offset || header.bytes != expected.bytes) {
    fail(id, "received " + fragment_text(header) + " from rank " + std::to_string(in.peer) + ", but it expects " +
                 fragment_text(expected) + " (the send and the recv with this key disagree)");
  }
  const auto data = r.get_span_bytes<std::byte>();
  const std::uint64_t size = payload_bytes(m, state_.dims);
  const ByteRange range = real_fragment(m, size, in.offset, in.bytes);
  if (data.size() != range.size()) {
    fail(id, "received " + std::to_string(data.size()) + " bytes of " + fragment_text(header) + ", expected " +
                 std::to_string(range.size()));
  }
  if (!in.last_leg) {  // a relay leg: keep the bytes for the relay send that forwards them
    relayed_[id] = Relayed{Bytes(data.begin(), data.end()), state_.seconds_since_start()};
    done(id);
    return true;
  }
  Buffer& buffer = state_.buffers.at(in.message);
  if (buffer.bytes.size() != size) buffer.bytes.resize(size);
  if (!data.empty()) std::memcpy(buffer.bytes.data() + range.begin, data.data(), data.size());
  buffer.received += data.size();
  MessageEnd& end = recv_ends_.at(in.message);
  const double posted = posted_at_[static_cast<std::size_t>(id)];
  end.start = end.start < 0 ? posted : std::min(end.start, posted);
  if (--buffer.fragments_left == 0) {
    if (buffer.received != size) {
      fail(id, "message " + std::to_string(in.message) + " is complete with " + std::to_string(buffer.received) +
                   " of its " + std::to_string(size) + " payload bytes (its fragments do not tile it)");
    }
    if (const std::string problem = unpack_payload(m, state_.dims, buffer.bytes, state_.in.plan, buffer.rows); !problem.empty())
      fail(id, "message " + std::to_string(in.message) + ": " + problem);
    buffer.bytes = Bytes{};
    buffer.complete = true;
    state_.record(id, Stream::comm, EventCategory::recv, end.start, static_cast<double>(size), 0, m.src);
    if (buffer.readers_left <= 0) state_.buffers.erase(in.message);
  }
  done(id);
  return true;
}

bool RankRunner::advance_collective(int id) {
  const Instr& in = state_.instr(id);
  auto [it, first] = collectives_.try_emplace(id);
  CollectiveProgress& c = it->second;
  bool progress = false;
  if (first) {
    c.bytes = send_collective(transport_, state_.in.program, in.collective, state_.rank, state_.own, state_.dims, state_.where(id));
    c.waiting = incoming_messages(state_.in.program, in.collective, state_.rank);
    progress = true;
  }
  for (auto m = c.waiting.begin(); m != c.waiting.end();) {
    const auto got = collective_arrived_.find(*m);
    if (got == collective_arrived_.end()) {
      ++m;
      continue;
    }
    accept_collective_message(state_.in.program, *m, state_.rank, got->second, state_.own, state_.dims, state_.where(id));
    c.bytes += static_cast<std::int64_t>(got->second.size() - sizeof(std::int32_t));
    collective_arrived_.erase(got);
    collective_stored_.insert(*m);
    m = c.waiting.erase(m);
    progress = true;
  }
  if (c.waiting.empty()) {
    state_.record(id, Stream::comm, EventCategory::remap, posted_at_[static_cast<std::size_t>(id)], static_cast<double>(c.bytes));
    done(id);
  }
  return progress;
}

void RankRunner::run_compute(int id) {
  const Instr& in = state_.instr(id);
  const double start = state_.seconds_since_start();
  if (in.kind == InstrKind::attention) {
    const double flops = run_attention(state_, id);
    state_.record(id, Stream::compute, EventCategory::attention, start, 0, flops);
  } else {
    // A stand-in for the projection: the CPU GEMM on capped dims with fixed inputs. Its output is not
    // used (Q, K, V come from the generator), it keeps the compute stream's shape.
    const std::int64_t cap = state_.in.options.gemm_max_dim;
    const std::int64_t m = std::clamp<std::int64_t>(in.m, 1, cap), n = std::clamp<std::int64_t>(in.n, 1, cap),
                       k = std::clamp<std::int64_t>(in.k, 1, cap);
    std::vector<float> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n)), c(static_cast<std::size_t>(m * n));
    for (std::size_t j = 0; j < a.size(); ++j) a[j] = static_cast<float>(j % 7) * 0.125F - 0.375F;
    for (std::size_t j = 0; j < b.size(); ++j) b[j] = static_cast<float>(j % 5) * 0.25F - 0.5F;
    kernels::throw_if_error(kernels::gemm(m, n, k, a, b, c), state_.where(id));
    state_.record(id, Stream::compute, EventCategory::gemm, start, 0, 2.0 * static_cast<double>(m * n * k));
  }
  done(id);
}

void RankRunner::done(int id) {
  status_[static_cast<std::size_t>(id)] = Status::done;
  for (const int m : state_.instr(id).reads) {  // free what no instruction will read any more
    const auto it = state_.buffers.find(m);
    if (it != state_.buffers.end() && --it->second.readers_left <= 0 && it->second.complete) state_.buffers.erase(it);
  }
}

bool RankRunner::collect_arrivals() {
  bool any = false;
  while (std::optional<Message> m = transport_.try_recv_kind(MessageKind::transfer)) {
    any = true;
    const auto it = recv_of_.find({m->src, m->tag.id()});
    const bool expected = it != recv_of_.end() && status_[static_cast<std::size_t>(it->second)] != Status::done &&
                          !arrived_.contains(it->second);
    if (!expected) {
      throw Error(ExitCode::runtime, rank_location(state_.rank),
                  "received " + describe(m->tag) + " (" + leg_text(m->payload) + ") from rank " + std::to_string(m->src) +
                      ", but none of its recv instructions expects it (or it came twice)",
                  "a send to the wrong peer, or a key used twice between two ranks");
    }
    arrived_.emplace(it->second, std::move(m->payload));
  }
  while (std::optional<Message> m = transport_.try_recv_kind(MessageKind::collective)) {
    any = true;
    const auto it = collective_in_.find({m->src, static_cast<int>(m->tag.id())});
    const bool expected = it != collective_in_.end() && !collective_arrived_.contains(it->second) &&
                          !collective_stored_.contains(it->second);
    if (!expected) {
      throw Error(ExitCode::runtime, rank_location(state_.rank),
                  "received " + describe(m->tag) + " from rank " + std::to_string(m->src) +
                      ", but none of its collective instructions expects rows from that rank (or they came twice)",
                  "remap moves that the two ranks disagree on");
    }
    collective_arrived_.emplace(it->second, std::move(m->payload));
  }
  return any;
}

void RankRunner::say_finished_and_wait_for_all() {
  for (int r = 0; r < transport_.size(); ++r) {
    if (r == state_.rank) continue;
    transport_.send(r, Tag::make(MessageKind::finished, 0), {});
    unfinished_peers_.push_back(r);
  }
  while (!unfinished_peers_.empty()) {
    bool progress = false;
    while (std::optional<Message> m = transport_.try_recv_kind(MessageKind::finished)) {
      std::erase(unfinished_peers_, m->src);
      progress = true;
    }
    check_aborted();
    progress |= collect_arrivals();  // a leg arriving now has no recv left to take it: it throws
    if (!unfinished_peers_.empty() && !progress && !transport_.wait_for_message(state_.in.options.receive_timeout)) {
      throw RankStalled(state_.rank,
                        "finished its instructions, but ranks " + rank_list(unfinished_peers_) + " did not finish within " +
                            std::to_string(state_.in.options.receive_timeout.count()) + " ms",
                        unfinished_peers_, true);
    }
  }
}

void RankRunner::check_aborted() {
  if (std::optional<Message> m = transport_.try_recv_kind(MessageKind::abort)) {
    throw PeerFailed(ExitCode::runtime, rank_location(state_.rank),
                     "stopped because rank " + std::to_string(m->src) +
                         " failed: " + std::string(reinterpret_cast<const char*>(m->payload.data()), m->payload.size()));
  }
}

void RankRunner::stalled() const {
  std::string waits;
  std::vector<int> awaited;
  auto add = [&](const std::string& item) { waits += (waits.empty() ? "" : "; ") + item; };
  for (int id = 0; id < count_; ++id) {
    if (status_[static_cast<std::size_t>(id)] != Status::posted) continue;
    const Instr& in = state_.instr(id);
    if (in.kind == InstrKind::recv) {
      add(state_.where(id) + ": " + describe(Tag::make(MessageKind::transfer, in.key)) + " from rank " + std::to_string(in.peer));
      awaited.push_back(in.peer);
    } else if (in.kind == InstrKind::collective) {
      std::vector<int> peers;
      if (const auto it = collectives_.find(id); it != collectives_.end())
        for (const int m : it->second.waiting) peers.push_back(state_.message(m).src);
      add(state_.where(id) + ": rows from ranks " + rank_list(peers));
      awaited.insert(awaited.end(), peers.begin(), peers.end());
    }
  }
  if (waits.empty()) {
    waits = "nothing it can name (a dependency that cannot complete";
    if (next_compute_ < static_cast<std::size_t>(count_)) waits += ": " + state_.where(static_cast<int>(next_compute_)) + " waits for its deps";
    waits += ")";
  }
  throw RankStalled(state_.rank,
                    "waited " + std::to_string(state_.in.options.receive_timeout.count()) +
                        " ms and nothing arrived; it still waits for: " + waits,
                    std::move(awaited), false);
}

}  // namespace zb::reference
