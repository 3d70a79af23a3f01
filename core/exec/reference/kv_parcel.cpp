#include "core/exec/reference/kv_parcel.hpp"

#include <algorithm>

#include "core/exec/reference/rank_location.hpp"
#include "core/exec/reference/wire.hpp"

namespace zb::reference {
namespace {

[[noreturn]] void fail(const RankState& state, const plan::Op& op, const std::string& what) {
  throw Error(ExitCode::runtime, rank_location(state.rank), state.where(op) + ": " + what);
}

const plan::Group& group_at(const plan::Plan& plan, int group) {
  if (group < 0 || static_cast<std::size_t>(group) >= plan.groups.size() ||
      plan.groups[static_cast<std::size_t>(group)].id != group) {
    throw Error(ExitCode::runtime, Location{}, "the plan has no group " + std::to_string(group));
  }
  return plan.groups[static_cast<std::size_t>(group)];
}

}  // namespace

std::vector<plan::Shard> kv_owner_shards(const plan::Plan& plan, int group, int kv_owner) {
  const plan::Group& g = group_at(plan, group);
  const auto it = std::find(g.ranks.begin(), g.ranks.end(), kv_owner);
  if (it == g.ranks.end()) {
    throw Error(ExitCode::runtime, rank_location(kv_owner),
                "rank " + std::to_string(kv_owner) + " is not a member of group " + std::to_string(group) +
                    ", so it owns no KV of it");
  }
  const int parts = static_cast<int>(g.ranks.size());
  const int pos = static_cast<int>(it - g.ranks.begin());
  std::vector<plan::Shard> shards;
  for (const int seq : g.sequences) {
    const std::int64_t length = plan.sequences.at(static_cast<std::size_t>(seq)).length;
    if (g.sharding == plan::Sharding::whole) {
      if (length > 0) shards.push_back({seq, 0, length});
      continue;
    }
    const auto [first, second] = plan::zigzag_shards(seq, length, parts, pos);
    if (first.size() > 0) shards.push_back(first);
    if (second.size() > 0) shards.push_back(second);
  }
  return shards;
}

Bytes pack_kv_parcel(const RankState& state, const plan::Op& send) {
  const auto shards = kv_owner_shards(state.in.plan, send.group, send.kv_owner);
  const auto width = static_cast<std::size_t>(state.kv.width());
  std::int64_t rows = 0;
  for (const auto& s : shards) rows += s.size();
  std::vector<float> values(static_cast<std::size_t>(rows) * width);
  std::size_t at = 0;
  const std::vector<int>& recvs = state.sources[static_cast<std::size_t>(send.id)];
  for (const auto& s : shards) {
    const auto span = std::span<float>(values).subspan(at, static_cast<std::size_t>(s.size()) * width);
    if (const auto missing = gather_kv(state, recvs, s.seq, s.begin, s.end, span)) {
      fail(state, send,
           "cannot send the KV of rank " + std::to_string(send.kv_owner) + ": sequence " + std::to_string(s.seq) +
               " token " + std::to_string(*missing) +
               " is neither its own nor brought by a recv this send depends on");
    }
    at += span.size();
  }
  ByteWriter w;
  w.put<std::int32_t>(send.group);
  w.put<std::int32_t>(send.kv_owner);
  w.put_span<float>(values);
  return w.take();
}

void unpack_kv_parcel(RankState& state, const plan::Op& recv, const Bytes& payload) {
  ByteReader r(payload);
  const auto group = r.get<std::int32_t>();
  const auto owner = r.get<std::int32_t>();
  if (group != recv.group || owner != recv.kv_owner) {
    fail(state, recv,
         "received the KV of rank " + std::to_string(owner) + " in group " + std::to_string(group) +
             " but expected rank " + std::to_string(recv.kv_owner) + "'s in group " + std::to_string(recv.group) +
             " (the send and the recv with this tag disagree)");
  }
  const auto shards = kv_owner_shards(state.in.plan, recv.group, recv.kv_owner);
  const auto bytes = r.get_span_bytes<float>();
  const auto width = static_cast<std::size_t>(state.kv.width());
  std::size_t rows = 0;
  for (const auto& s : shards) rows += static_cast<std::size_t>(s.size());
  if (bytes.size() != rows * width * sizeof(float)) {
    fail(state, recv, "the KV parcel holds " + std::to_string(bytes.size()) + " bytes, expected " +
                          std::to_string(rows * width * sizeof(float)));
  }
  std::vector<float> values(rows * width);
  std::memcpy(values.data(), bytes.data(), bytes.size());
  RowStore& parcel = state.parcels.try_emplace(recv.id, state.kv.width()).first->second;
  std::size_t at = 0;
  for (const auto& s : shards) {
    const std::size_t count = static_cast<std::size_t>(s.size()) * width;
    parcel.put(s.seq, s.begin, s.end, std::span<const float>(values).subspan(at, count));
    at += count;
  }
}

}  // namespace zb::reference
