// RankRunner's transfer legs: a send packs its message once and sends its fragment (or, as a relay,
// forwards the fragment its relay recv got); a recv checks the leg's header and size and stores its
// fragment, and a completed buffer is unpacked into rows.
#include <cstring>

#include "core/exec/reference/gradient_ops.hpp"
#include "core/exec/reference/leg_header.hpp"
#include "core/exec/reference/rank_runner.hpp"

namespace zb::reference {

using lower::Instr;

void RankRunner::send_leg(int id) {
  const Instr& in = state_.instr(id);
  const lower::Message& m = state_.message(in.message);
  const LegHeader header{in.message, in.offset, in.bytes};
  const Tag tag = Tag::make(MessageKind::transfer, in.key);
  if (in.stream == lower::Stream::relay) {  // forward what the relay recv got, bit for bit
    const int source = in.stream_from;      // checked before anything ran
    const auto it = relayed_.find(source);
    if (it == relayed_.end()) fail(id, "its relay recv " + state_.where(source) + " holds no fragment");
    const Relayed relayed = std::move(it->second);
    relayed_.erase(it);
    transport_.send(in.peer, tag, encode_leg(header, relayed.bytes));
    state_.record(id, Track::nic,
                  in.leg == lower::LegRole::nic ? EventCategory::route_nic : EventCategory::route_combine,
                  relayed.arrived, static_cast<double>(relayed.bytes.size()), 0, state_.instr(source).peer);
    done(id);
    return;
  }
  auto [out, first] = outgoing_.try_emplace(in.message);
  MessageEnd& end = send_ends_.at(in.message);
  if (first && m.purpose == lower::Purpose::dkv) {  // an accumulator: what it read plus this rank's partial
    if (const std::string problem = pack_accumulator(state_, id, out->second.payload); !problem.empty())
      fail(id, problem);
    out->second.left = end.left;
    end.start = posted_at_[static_cast<std::size_t>(id)];
  } else if (first) {  // pack the whole message once; its first legs cut their fragments out of it
    const std::vector<const TensorRows*> sources = state_.sources(id);
    if (const auto missing = pack_payload(m, state_.dims, sources, out->second.payload)) {
      fail(id, "cannot send message " + std::to_string(in.message) + " to rank " + std::to_string(m.dst) +
                   ": " + slice_text(m.slices[missing->slice]) + ", token " + std::to_string(missing->token) +
                   " is neither on this rank nor in a buffer of the messages this instruction reads");
    }
    out->second.left = end.left;
    end.start = posted_at_[static_cast<std::size_t>(id)];
  }
  const Bytes& payload = out->second.payload;
  const lower::ByteRange range =
      lower::payload_fragment(m, static_cast<std::int64_t>(payload.size()), in.offset, in.bytes);
  transport_.send(
      in.peer, tag,
      encode_leg(header, std::span<const std::byte>(payload).subspan(
                             static_cast<std::size_t>(range.begin), static_cast<std::size_t>(range.size()))));
  end.start = std::min(end.start, posted_at_[static_cast<std::size_t>(id)]);
  if (--out->second.left == 0) {
    state_.record(id, Track::comm, EventCategory::send, end.start, static_cast<double>(payload.size()), 0,
                  m.dst);
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
  if (header.message != expected.message || header.offset != expected.offset ||
      header.bytes != expected.bytes) {
    fail(id, "received " + fragment_text(header) + " from rank " + std::to_string(in.peer) +
                 ", but it expects " + fragment_text(expected) +
                 " (the send and the recv with this key disagree)");
  }
  const auto data = r.get_span_bytes<std::byte>();
  const std::uint64_t size = payload_bytes(m, state_.dims);
  const lower::ByteRange range =
      lower::payload_fragment(m, static_cast<std::int64_t>(size), in.offset, in.bytes);
  if (data.size() != static_cast<std::size_t>(range.size())) {
    fail(id, "received " + std::to_string(data.size()) + " bytes of " + fragment_text(header) +
                 ", expected " + std::to_string(range.size()));
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
      fail(id, "message " + std::to_string(in.message) + " is complete with " +
                   std::to_string(buffer.received) + " of its " + std::to_string(size) +
                   " payload bytes (its fragments do not tile it)");
    }
    if (const std::string problem =
            unpack_payload(m, state_.dims, buffer.bytes, state_.in.program.sequences, buffer.rows);
        !problem.empty())
      fail(id, "message " + std::to_string(in.message) + ": " + problem);
    buffer.bytes = Bytes{};
    buffer.complete = true;
    state_.record(id, Track::comm, EventCategory::recv, end.start, static_cast<double>(size), 0, m.src);
    // An accumulator no instruction forwards has arrived where it is finished: add it to this rank's rows.
    if (m.purpose == lower::Purpose::dkv && m.readers == 0) accumulate_delivery(state_, buffer.rows, m);
    if (buffer.readers_left <= 0) state_.buffers.erase(in.message);
  }
  done(id);
  return true;
}

}  // namespace zb::reference
