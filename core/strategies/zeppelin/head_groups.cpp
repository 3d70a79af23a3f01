#include "core/strategies/zeppelin/head_groups.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace zb::zeppelin {
namespace {

// Tokens of a group: the sum of its documents' lengths.
double group_tokens(const GroupAssignment& g, const std::vector<std::int64_t>& lengths) {
  double s = 0;
  for (const int d : g.docs) s += static_cast<double>(lengths[static_cast<std::size_t>(d)]);
  return s;
}

// At most what one of p members holds of the group's documents: s/p of each, plus 2 rows of rounding
// (a zigzag chunk pair, or USP's parts of one, round up by at most a row each).
double member_share(const GroupAssignment& g, const std::vector<std::int64_t>& lengths, int p) {
  return p <= 1 ? group_tokens(g, lengths)
                : group_tokens(g, lengths) / p + 2.0 * static_cast<double>(g.docs.size());
}

// Whether every run of u consecutive ranks lies in one node.
bool u_groups_in_nodes(const std::vector<int>& ranks, int u, int gpus_per_node) {
  for (std::size_t q = 0; q < ranks.size(); q += static_cast<std::size_t>(u)) {
    if (ranks[q] / gpus_per_node != ranks[q + static_cast<std::size_t>(u) - 1] / gpus_per_node) return false;
  }
  return true;
}

}  // namespace

std::vector<std::optional<HeadGroup>> head_groups(const Partition& part, const CostModel& cost,
                                                  const std::vector<std::int64_t>& lengths,
                                                  const HeadGroupOptions& options) {
  std::vector<std::optional<HeadGroup>> out(part.groups.size());
  if (options.which == HeadGroups::none) return out;
  // Each bin's (micro-batch, GPU) tokens as the partition placed them: a ring member holds 1/P of its
  // documents, a local GPU all of its own.
  std::map<std::pair<int, int>, double> bin_tokens;
  for (const GroupAssignment& g : part.groups) {
    const double share = member_share(g, lengths, static_cast<int>(g.ranks.size()));
    for (const int r : g.ranks) bin_tokens[{g.micro_batch, r}] += share;
  }
  const auto capacity = static_cast<double>(cost.token_capacity_per_gpu());
  const int gpn = cost.cluster().gpus_per_node;
  for (std::size_t i = 0; i < part.groups.size(); ++i) {
    const GroupAssignment& g = part.groups[i];
    if (g.ranks.size() < 2) continue;  // a local sequence: nothing to split
    std::vector<int> ranks = g.ranks;
    std::sort(ranks.begin(), ranks.end());
    const int p = static_cast<int>(ranks.size());
    const double tokens = group_tokens(g, lengths);
    const double old_share = member_share(g, lengths, p);
    for (auto u = options.degrees.rbegin(); u != options.degrees.rend(); ++u) {
      if (*u < 2 || p % *u != 0 || !u_groups_in_nodes(ranks, *u, gpn)) continue;
      const HeadParallelShape shape{*u, p / *u, options.kv_heads};
      // A ring of head slices (r > 1) needs every document in every zigzag chunk: a member whose ring
      // steps hold no pair would compute no heads of what its all-to-all traded.
      if (shape.ring > 1 && std::any_of(g.docs.begin(), g.docs.end(), [&](int d) {
            return lengths[static_cast<std::size_t>(d)] < 2LL * p;
          }))
        continue;
      // A member's bin gives up its share of the group as a ring and holds its share plus the received
      // rows (and USP's ring buffers), on top of what earlier head-parallel groups of the bin hold
      // (merged groups add up the same way).
      const double need = head_parallel_member_need(cost, shape, tokens) - tokens / p + old_share;
      const auto after = [&](int r) { return bin_tokens[{g.micro_batch, r}] - old_share + need; };
      if (!std::all_of(ranks.begin(), ranks.end(), [&](int r) { return after(r) <= capacity; })) continue;
      for (const int r : ranks) bin_tokens[{g.micro_batch, r}] = after(r);
      out[i] = HeadGroup{shape, std::move(ranks)};
      break;
    }
  }
  return out;
}

}  // namespace zb::zeppelin
