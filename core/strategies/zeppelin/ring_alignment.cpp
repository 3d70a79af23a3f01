#include "core/strategies/zeppelin/ring_alignment.hpp"

#include <algorithm>
#include <map>

namespace zb::zeppelin {

void align_ring_starts(const std::vector<std::int64_t>& lengths, const std::vector<double>& local_cost,
                       int world, std::int64_t capacity, const std::vector<GroupAssignment>& inter,
                       const std::vector<GroupAssignment>& intra, std::vector<std::vector<int>>& local,
                       std::vector<std::vector<std::int64_t>>& tokens,
                       std::vector<std::vector<double>>& bin_load,
                       const std::function<double(std::int64_t, int)>& ring_seconds) {
  const int k = static_cast<int>(tokens.size());
  const auto cell = [](auto& table, int mb, int r) -> auto& {
    return table[static_cast<std::size_t>(mb)][static_cast<std::size_t>(r)];
  };
  // Every local document back into its rank's pool (longest first), its bin emptied.
  std::vector<std::multimap<double, int>> pool(static_cast<std::size_t>(world));
  const auto saved_local = local;
  const auto saved_tokens = tokens;
  const auto saved_load = bin_load;
  for (int mb = 0; mb < k; ++mb) {
    for (int r = 0; r < world; ++r) {
      auto& docs = local[static_cast<std::size_t>(mb * world + r)];
      for (const int d : docs) {
        pool[static_cast<std::size_t>(r)].emplace(local_cost[static_cast<std::size_t>(d)], d);
        cell(tokens, mb, r) -= lengths[static_cast<std::size_t>(d)];
        cell(bin_load, mb, r) -= local_cost[static_cast<std::size_t>(d)];
      }
      docs.clear();
    }
  }
  std::vector<double> now(static_cast<std::size_t>(world), 0.0);  // each rank's work so far
  std::vector<int> last_ring_mb(static_cast<std::size_t>(world), 0);
  // Moves local documents of rank r into its micro-batches before `mb` until its work reaches `until`.
  const auto fill_before = [&](int r, int mb, double until) {
    auto& mine = pool[static_cast<std::size_t>(r)];
    double& t = now[static_cast<std::size_t>(r)];
    while (t < until && !mine.empty()) {
      auto it = mine.upper_bound(until - t);
      if (it == mine.begin()) break;
      --it;
      const int d = it->second;
      const auto s = lengths[static_cast<std::size_t>(d)];
      int to = -1;
      for (int b = mb - 1; b >= 0 && to < 0; --b) {
        if (cell(tokens, b, r) + s <= capacity) to = b;
      }
      if (to < 0) break;  // no earlier room for the longest that fits the gap: accept the wait
      cell(tokens, to, r) += s;
      cell(bin_load, to, r) += it->first;
      local[static_cast<std::size_t>(to * world + r)].push_back(d);
      t += it->first;
      mine.erase(it);
    }
  };
  for (int mb = 0; mb < k; ++mb) {
    std::vector<bool> ringed(static_cast<std::size_t>(world), false);  // in a ring of this micro-batch yet
    for (const auto* groups : {&inter, &intra}) {
      for (const GroupAssignment& g : *groups) {
        if (g.micro_batch != mb) continue;
        double start = 0;
        for (const int r : g.ranks) start = std::max(start, now[static_cast<std::size_t>(r)]);
        for (const int r : g.ranks) {
          if (!ringed[static_cast<std::size_t>(r)]) fill_before(r, mb, start);
        }
        double share = 0;
        for (const int d : g.docs)
          share += ring_seconds(lengths[static_cast<std::size_t>(d)], static_cast<int>(g.ranks.size()));
        for (const int r : g.ranks) {
          now[static_cast<std::size_t>(r)] = std::max(now[static_cast<std::size_t>(r)], start) + share;
          ringed[static_cast<std::size_t>(r)] = true;
          last_ring_mb[static_cast<std::size_t>(r)] = mb;
        }
      }
    }
  }
  // The rest: from the rank's last ring's micro-batch on, the roomiest bin first; else any bin with room.
  for (int r = 0; r < world; ++r) {
    auto& mine = pool[static_cast<std::size_t>(r)];
    for (auto it = mine.rbegin(); it != mine.rend(); ++it) {
      const int d = it->second;
      const auto s = lengths[static_cast<std::size_t>(d)];
      int to = -1;
      for (const int from : {last_ring_mb[static_cast<std::size_t>(r)], 0}) {
        for (int b = from; b < k; ++b) {
          if (cell(tokens, b, r) + s <= capacity && (to < 0 || cell(tokens, b, r) < cell(tokens, to, r)))
            to = b;
        }
        if (to >= 0) break;
      }
      if (to < 0) {  // the dealing left no room for it: keep the first dealing, which fitted
        local = saved_local;
        tokens = saved_tokens;
        bin_load = saved_load;
        return;
      }
      cell(tokens, to, r) += s;
      cell(bin_load, to, r) += it->first;
      local[static_cast<std::size_t>(to * world + r)].push_back(d);
    }
  }
}

}  // namespace zb::zeppelin
