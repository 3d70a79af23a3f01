#pragma once
// Which ranks own a token range of a sequence, for plan::verify's data checks: one sorted vector per
// sequence instead of a look-up in every rank's map for every block.
#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace zb::plan {

using Intervals = std::vector<std::pair<std::int64_t, std::int64_t>>;  // sorted, merged

// Per sequence, every rank's merged ranges of it, sorted by start, with the running maximum of their
// ends: which ranks hold all of [k0, k1), walking back from the last range that starts at or before k0
// only while an earlier range still reaches past k0 (ranges of different ranks rarely overlap, so the
// walk is a step or two).
class KeyIndex {
 public:
  KeyIndex(const std::vector<std::map<int, Intervals>>& owned, std::size_t sequences) : ranges_(sequences) {
    for (std::size_t rank = 0; rank < owned.size(); ++rank) {
      for (const auto& [seq, iv] : owned[rank]) {
        if (seq < 0 || static_cast<std::size_t>(seq) >= sequences) continue;
        for (const auto& [b, e] : iv)
          ranges_[static_cast<std::size_t>(seq)].push_back({b, e, 0, static_cast<int>(rank)});
      }
    }
    for (auto& r : ranges_) {
      std::sort(r.begin(), r.end(), [](const Range& a, const Range& b) { return a.begin < b.begin; });
      std::int64_t reach = INT64_MIN;
      for (auto& x : r) x.reach = reach = std::max(reach, x.end);
    }
  }

  std::vector<int> owners_of(int seq, std::int64_t k0, std::int64_t k1) const {
    std::vector<int> out;
    const auto& r = ranges_[static_cast<std::size_t>(seq)];
    auto it =
        std::upper_bound(r.begin(), r.end(), k0, [](std::int64_t k, const Range& x) { return k < x.begin; });
    while (it != r.begin()) {
      --it;
      if (it->reach <= k0) break;  // no range from here back reaches past k0
      if (k1 <= it->end) out.push_back(it->owner);
    }
    return out;
  }

 private:
  struct Range {
    std::int64_t begin, end;
    std::int64_t reach;  // the largest end of this range and every range before it
    int owner;
  };
  std::vector<std::vector<Range>> ranges_;
};

}  // namespace zb::plan
