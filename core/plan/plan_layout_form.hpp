#pragma once
// Internal to the plan JSON forms: the layout a rank's groups imply, so that a layout which is exactly that
// is printed as "groups" instead of one shard per (rank, sequence). Ring CP over P ranks holds two zigzag
// chunks of every sequence on every rank: printed shard by shard that is P·S entries, the largest part of
// a schema-2 plan (docs/PLAN_FORMAT.md, "Size").
//
// The rule (the one PlanBuilder::add_group lays shards by): rank r's shards are, for every group that lists
// r (in group order) and every sequence of that group (in its order), owned_shards(sequence, length,
// group size, r's position in the group): the whole sequence in a group of one, else r's non-empty
// zigzag chunks.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "core/plan/plan.hpp"

namespace zb::plan::detail {

// Where a rank sits: a group it belongs to and its position there.
struct Seat {
  int group = 0;
  int position = 0;
};

// Each rank's seats, in group order. Ranks outside [0, world_size) are skipped (the reader has reported
// them already).
[[nodiscard]] inline std::vector<std::vector<Seat>> seats_of(const Plan& plan) {
  std::vector<std::vector<Seat>> seats(static_cast<std::size_t>(std::max(plan.world_size, 0)));
  for (const Group& g : plan.groups) {
    for (std::size_t pos = 0; pos < g.ranks.size(); ++pos) {
      const int r = g.ranks[pos];
      if (r >= 0 && r < plan.world_size)
        seats[static_cast<std::size_t>(r)].push_back({g.id, static_cast<int>(pos)});
    }
  }
  return seats;
}

// Calls `each(shard)` for the shards `seats` imply, in order, until it returns false; returns whether every
// call returned true. Sequence ids must be valid (the reader checks them before).
template <typename F>
bool for_each_implied_shard(const Plan& plan, const std::vector<Seat>& seats, F&& each) {
  for (const Seat& seat : seats) {
    const Group& g = plan.groups[static_cast<std::size_t>(seat.group)];
    const int parts = static_cast<int>(g.ranks.size());
    for (const int seq : g.sequences) {
      const std::int64_t length = plan.sequences[static_cast<std::size_t>(seq)].length;
      if (parts == 1) {
        if (!each(Shard{seq, 0, length})) return false;
        continue;
      }
      const auto [a, b] = zigzag_shards(seq, length, parts, seat.position);
      if (a.size() > 0 && !each(a)) return false;
      if (b.size() > 0 && !each(b)) return false;
    }
  }
  return true;
}

[[nodiscard]] inline bool same_shard(const Shard& a, const Shard& b) {
  return a.seq == b.seq && a.begin == b.begin && a.end == b.end;
}

[[nodiscard]] inline bool same_shards(const std::vector<Shard>& a, const std::vector<Shard>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), same_shard);
}

// Whether `shards` are exactly, in order, what `seats` imply.
[[nodiscard]] inline bool implied_by_groups(const Plan& plan, const std::vector<Seat>& seats,
                                            const std::vector<Shard>& shards) {
  std::size_t i = 0;
  const bool all = for_each_implied_shard(plan, seats, [&](const Shard& s) {
    if (i >= shards.size()) return false;
    return same_shard(shards[i++], s);
  });
  return all && i == shards.size();
}

}  // namespace zb::plan::detail
