#include "core/exec/reference/parcel_lifetimes.hpp"

#include <algorithm>
#include <optional>
#include <tuple>

#include "core/exec/reference/kv_parcel.hpp"

namespace zb::reference {
namespace {

// Token ranges sorted by (sequence, begin), so that two lists can be intersected in one sweep.
using Ranges = std::vector<plan::Shard>;

void sort_ranges(Ranges& ranges) {
  std::sort(ranges.begin(), ranges.end(),
            [](const plan::Shard& a, const plan::Shard& b) { return std::tie(a.seq, a.begin) < std::tie(b.seq, b.begin); });
}

bool overlap(const Ranges& a, const Ranges& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const plan::Shard& x = a[i];
    const plan::Shard& y = b[j];
    if (x.seq == y.seq && x.begin < y.end && y.begin < x.end && x.size() > 0 && y.size() > 0) return true;
    // Advance the range that ends first (in (sequence, end) order): it cannot meet anything later.
    if (std::tie(x.seq, x.end) < std::tie(y.seq, y.end)) ++i;
    else ++j;
  }
  return false;
}

// The K|V rows an op reads; nullopt when it cannot be worked out (a malformed op, reported when it runs):
// such an op counts as reading every parcel, which only keeps parcels longer.
std::optional<Ranges> kv_reads(const RankState& state, const plan::Op& op) {
  try {
    Ranges reads;
    if (op.kind == plan::OpKind::attention) {
      for (const auto& b : plan::expand_blocks(state.in.plan, state.rank, op)) reads.push_back({b.seq, b.k0, b.k1});
    } else {
      reads = kv_owner_shards(state.in.plan, op.group, op.kv_owner);
    }
    sort_ranges(reads);
    return reads;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

ParcelLifetimes::ParcelLifetimes(const RankState& state) {
  const auto& ops = state.in.plan.ranks.at(static_cast<std::size_t>(state.rank)).ops;
  reads_from_.resize(ops.size());
  readers_left_.assign(ops.size(), 0);
  std::vector<std::optional<Ranges>> held(ops.size());  // recv op → the rows its parcel holds
  for (const plan::Op& op : ops)
    if (op.kind == plan::OpKind::recv && op.id >= 0 && static_cast<std::size_t>(op.id) < ops.size())
      held[static_cast<std::size_t>(op.id)] = kv_reads(state, op);
  for (std::size_t i = 0; i < ops.size() && i < state.sources.size(); ++i) {
    const plan::Op& op = ops[i];
    if (op.kind != plan::OpKind::attention && op.kind != plan::OpKind::send) continue;  // only these read parcels
    const std::optional<Ranges> reads = kv_reads(state, op);
    for (const int r : state.sources[i]) {
      const auto& parcel = held[static_cast<std::size_t>(r)];
      if (reads && parcel && !overlap(*reads, *parcel)) continue;
      reads_from_[i].push_back(r);
      ++readers_left_[static_cast<std::size_t>(r)];
    }
  }
}

void ParcelLifetimes::op_done(RankState& state, int id) {
  const auto i = static_cast<std::size_t>(id);
  if (i >= reads_from_.size()) return;
  if (state.op(id).kind == plan::OpKind::recv && readers_left_[i] == 0) state.parcels.erase(id);
  for (const int r : reads_from_[i])
    if (--readers_left_[static_cast<std::size_t>(r)] == 0) state.parcels.erase(r);
  reads_from_[i].clear();  // an op is done once; clearing keeps a second call harmless
}

}  // namespace zb::reference
