#include "core/strategies/packing.hpp"

#include <algorithm>
#include <map>
#include <numeric>

namespace zb {

std::int64_t pad_to(std::int64_t length, std::int64_t align) {
  return (length + align - 1) / align * align;
}

std::vector<Pack> pack_ffd(const std::vector<std::int64_t>& lengths, std::int64_t align,
                           std::int64_t capacity) {
  std::vector<int> order(lengths.size());
  std::iota(order.begin(), order.end(), 0);
  // Longest first; ties by index so the result is deterministic.
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return lengths[static_cast<std::size_t>(a)] > lengths[static_cast<std::size_t>(b)];
  });
  std::vector<Pack> packs;
  // Free space -> pack indices, so first fit is a lower_bound instead of a scan over every pack.
  std::multimap<std::int64_t, std::size_t> by_free;
  for (int doc : order) {
    const std::int64_t need = pad_to(lengths[static_cast<std::size_t>(doc)], align);
    if (need > capacity) continue;
    // First fit in creation order: among packs with enough room, the oldest one.
    std::size_t best = packs.size();
    auto best_it = by_free.end();
    for (auto it = by_free.lower_bound(need); it != by_free.end(); ++it) {
      if (it->second < best) {
        best = it->second;
        best_it = it;
      }
    }
    if (best == packs.size()) {
      packs.push_back({});
    } else {
      by_free.erase(best_it);
    }
    packs[best].docs.push_back(doc);
    packs[best].padded_tokens += need;
    by_free.emplace(capacity - packs[best].padded_tokens, best);
  }
  return packs;
}

}  // namespace zb
