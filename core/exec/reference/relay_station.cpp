#include "core/exec/reference/relay_station.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "core/exec/reference/rank_location.hpp"
#include "core/exec/reference/wire.hpp"

namespace zb::reference {
namespace {

struct PieceHeader {
  std::int32_t origin = 0;
  std::int32_t plan_tag = 0;
  std::uint64_t total = 0;   // bytes of the whole payload
  std::uint64_t offset = 0;  // where this piece goes in it
  std::int32_t hop = 0;      // index in `path` of the rank this piece is addressed to
};

Bytes encode(const PieceHeader& h, const std::vector<std::int32_t>& path, std::span<const std::byte> data) {
  ByteWriter w;
  w.put(h);
  w.put_span<std::int32_t>(path);
  w.put_span<std::byte>(data);
  return w.take();
}

}  // namespace

void RelayStation::send_routed(Transport& transport, const plan::Op& send, const Bytes& payload) {
  const plan::Route& route = send.route;
  const std::size_t parts = route.proxies.size();
  if (parts == 0 || route.peer_proxies.size() != parts || route.part_bytes.size() != parts || route.chunks < 1) {
    throw Error(ExitCode::runtime, rank_location(state_.rank),
                state_.where(send) + ": the route is malformed (" + std::to_string(parts) + " proxies, " +
                    std::to_string(route.peer_proxies.size()) + " peer proxies, " +
                    std::to_string(route.part_bytes.size()) + " part sizes, " + std::to_string(route.chunks) + " chunks)");
  }
  // Part boundaries in proportion to the planned part sizes (the reference payload is smaller than the
  // planned bytes, the proportions are kept).
  const double planned = static_cast<double>(std::accumulate(route.part_bytes.begin(), route.part_bytes.end(), std::int64_t{0}));
  const std::uint64_t total = payload.size();
  std::uint64_t begin = 0;
  double cumulative = 0;
  for (std::size_t i = 0; i < parts; ++i) {
    cumulative += static_cast<double>(route.part_bytes[i]);
    std::uint64_t end = total;
    if (i + 1 < parts) {
      end = planned > 0 ? static_cast<std::uint64_t>(static_cast<double>(total) * (cumulative / planned)) : 0;
      end = std::clamp(end, begin, total);
    }
    std::vector<std::int32_t> path{state_.rank};
    for (const int hop : {route.proxies[i], route.peer_proxies[i], send.peer})
      if (hop != path.back()) path.push_back(hop);
    const auto chunks = static_cast<std::uint64_t>(route.chunks);
    const std::uint64_t chunk = std::max<std::uint64_t>(1, (end - begin + chunks - 1) / chunks);
    for (std::uint64_t at = begin; at < end; at += chunk) {
      const std::uint64_t size = std::min(chunk, end - at);
      const PieceHeader header{state_.rank, send.tag, total, at, 1};
      transport.send(path[1], Tag::make(MessageKind::relay, next_piece_++),
                     encode(header, path, std::span<const std::byte>(payload).subspan(at, size)));
    }
    begin = end;
  }
}

bool RelayStation::pump(Transport& transport) {
  bool handled = false;
  while (std::optional<Message> message = transport.try_recv_kind(MessageKind::relay)) {
    handled = true;
    const double start = state_.seconds_since_start();
    ByteReader r(message->payload);
    auto header = r.get<PieceHeader>();
    const auto path_bytes = r.get_span_bytes<std::int32_t>();
    std::vector<std::int32_t> path(path_bytes.size() / sizeof(std::int32_t));
    std::memcpy(path.data(), path_bytes.data(), path_bytes.size());
    const auto data = r.get_span_bytes<std::byte>();
    const auto hop = static_cast<std::size_t>(header.hop);
    if (hop >= path.size() || path[hop] != state_.rank) {
      throw Error(ExitCode::runtime, rank_location(state_.rank),
                  "got a relay piece of routed transfer tag " +
                      std::to_string(header.plan_tag) + " from rank " + std::to_string(message->src) +
                      " that is not addressed to it");
    }
    if (hop + 1 < path.size()) {  // a proxy: pass it on along the path
      const int next = path[hop + 1];
      ++header.hop;
      transport.send(next, Tag::make(MessageKind::relay, next_piece_++), encode(header, path, data));
      TraceEvent e;
      e.rank = state_.rank;
      e.stream = Stream::nic;
      e.name = "relay";
      const int gpn = std::max(1, state_.in.plan.gpus_per_node);
      e.category = next / gpn != state_.rank / gpn ? EventCategory::route_nic : EventCategory::route_combine;
      e.start = start;
      e.end = std::max(start, state_.seconds_since_start());
      e.bytes = static_cast<double>(data.size());
      e.peer = message->src;
      state_.events.push_back(std::move(e));
      continue;
    }
    Assembly& a = assemblies_[{header.origin, header.plan_tag}];
    if (a.bytes.empty()) a.bytes.resize(header.total);
    if (a.bytes.size() != header.total || header.offset + data.size() > header.total) {
      throw Error(ExitCode::runtime, rank_location(state_.rank),
                  "relay pieces of routed transfer tag " +
                      std::to_string(header.plan_tag) + " from rank " + std::to_string(header.origin) +
                      " disagree on its size (two routed sends with one tag?)");
    }
    if (!data.empty()) std::memcpy(a.bytes.data() + header.offset, data.data(), data.size());
    a.received += data.size();
  }
  return handled;
}

std::optional<Bytes> RelayStation::take_assembled(int src, int tag) {
  const auto it = assemblies_.find({src, tag});
  if (it == assemblies_.end() || it->second.received != it->second.bytes.size()) return std::nullopt;
  Bytes bytes = std::move(it->second.bytes);
  assemblies_.erase(it);
  return bytes;
}

std::string RelayStation::leftovers() const {
  std::string text;
  for (const auto& [key, a] : assemblies_) {
    if (!text.empty()) text += "; ";
    text += "routed transfer tag " + std::to_string(key.second) + " from rank " + std::to_string(key.first) + " (" +
            std::to_string(a.received) + " of " + std::to_string(a.bytes.size()) + " bytes arrived)";
  }
  return text;
}

}  // namespace zb::reference
