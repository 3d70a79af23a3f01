#include "core/exec/reference/remap_exchange.hpp"

#include <algorithm>

#include "core/exec/reference/rank_location.hpp"
#include "core/exec/reference/wire.hpp"

namespace zb::reference {
namespace {

[[noreturn]] void fail(const RemapEndpoint& endpoint, const std::string& what) {
  throw Error(ExitCode::runtime, rank_location(endpoint.rank), endpoint.context + ": " + what);
}

std::string range_text(const plan::Shard& s) {
  return "sequence " + std::to_string(s.seq) + " tokens [" + std::to_string(s.begin) + ", " + std::to_string(s.end) + ")";
}

}  // namespace

RemapTraffic remap_traffic(int rank, const std::vector<plan::RemapMove>& moves, plan::RemapDirection direction) {
  RemapTraffic traffic;
  for (const plan::RemapMove& m : moves) {
    const bool to_linear = direction == plan::RemapDirection::to_linear;
    const int from = to_linear ? m.src : m.dst;
    const int to = to_linear ? m.dst : m.src;
    if (from == to || m.range.size() <= 0) continue;  // nothing travels
    if (from == rank) traffic.outgoing[to].push_back(m.range);
    if (to == rank) traffic.incoming[from].push_back(m.range);
  }
  return traffic;
}

std::int64_t send_remap_rows(Transport& transport, Tag tag, const RemapTraffic& traffic, const RemapEndpoint& endpoint) {
  std::int64_t total = 0;
  for (const auto& [peer, ranges] : traffic.outgoing) {
    ByteWriter w;
    w.put<std::uint64_t>(ranges.size());
    for (const plan::Shard& s : ranges) {
      w.put<std::int32_t>(s.seq);
      w.put<std::int64_t>(s.begin);
      w.put<std::int64_t>(s.end);
      for (RowStore* store : endpoint.stores) {
        if (const auto missing = store->first_missing(s.seq, s.begin, s.end)) {
          fail(endpoint, "cannot send " + range_text(s) + " to rank " + std::to_string(peer) + ": token " +
                             std::to_string(*missing) + " is not on this rank");
        }
        w.put_span<float>(store->rows(s.seq, s.begin, s.end));
      }
    }
    for (const plan::Shard& s : ranges)
      for (RowStore* store : endpoint.stores) store->erase(s.seq, s.begin, s.end);
    Bytes payload = w.take();
    total += static_cast<std::int64_t>(payload.size());
    transport.send(peer, tag, std::move(payload));
  }
  return total;
}

std::int64_t receive_remap_rows(Transport& transport, Tag tag, const RemapTraffic& traffic, std::vector<int>& waiting,
                                const RemapEndpoint& endpoint, const std::vector<plan::Sequence>& sequences) {
  std::int64_t total = 0;
  for (auto it = waiting.begin(); it != waiting.end();) {
    const int peer = *it;
    std::optional<Bytes> payload = transport.try_recv(peer, tag);
    if (!payload) {
      ++it;
      continue;
    }
    total += static_cast<std::int64_t>(payload->size());
    const std::vector<plan::Shard>& expected = traffic.incoming.at(peer);
    ByteReader r(*payload);
    const auto count = r.get<std::uint64_t>();
    if (count != expected.size()) {
      fail(endpoint, "rank " + std::to_string(peer) + " sent " + std::to_string(count) + " ranges, expected " +
                         std::to_string(expected.size()));
    }
    for (const plan::Shard& want : expected) {
      plan::Shard got;
      got.seq = r.get<std::int32_t>();
      got.begin = r.get<std::int64_t>();
      got.end = r.get<std::int64_t>();
      if (got.seq != want.seq || got.begin != want.begin || got.end != want.end) {
        fail(endpoint, "rank " + std::to_string(peer) + " sent " + range_text(got) + " where " + range_text(want) +
                           " was expected (the two ranks' remap ops disagree)");
      }
      const std::int64_t length = sequences.at(static_cast<std::size_t>(got.seq)).length;
      if (got.begin < 0 || got.end > length)
        fail(endpoint, range_text(got) + " is outside the sequence's " + std::to_string(length) + " tokens");
      for (RowStore* store : endpoint.stores) {
        std::vector<float> rows(static_cast<std::size_t>(got.size() * store->width()));
        r.get_into(std::span<float>(rows));
        store->put(got.seq, got.begin, got.end, rows);
      }
    }
    it = waiting.erase(it);
  }
  return total;
}

}  // namespace zb::reference
