#pragma once
// Which (KV owner, group) payloads have reached a rank by each of its ops, for plan::verify's data
// checks: those that came through recv ops and K/V collectives (all-gather, all-to-all) it depends on,
// directly or transitively. Kept as one bitset per op over the pairs the rank ever receives, so that an
// op inherits its dependencies' payloads by OR-ing words; a std::set per op copied from every dependency
// made a 128-GPU ring's verification spend most of its time allocating tree nodes.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/plan/plan.hpp"

namespace zb::plan {

class ReceivedPayloads {
 public:
  ReceivedPayloads(const std::vector<Op>& ops, int world_size) {
    for (const Op& op : ops) {
      for_payload(op, world_size, [&](int owner, int group) { keys_.emplace_back(owner, group); });
    }
    std::sort(keys_.begin(), keys_.end());
    keys_.erase(std::unique(keys_.begin(), keys_.end()), keys_.end());
    words_ = keys_.size() / 64 + 1;
    bits_.assign(ops.size() * words_, 0);
    for (const Op& op : ops) {
      if (op.id < 0 || static_cast<std::size_t>(op.id) >= ops.size()) continue;
      std::uint64_t* have = row(op.id);
      for (int d : op.deps) {
        if (d < 0 || d >= op.id) continue;  // reported by check_dag
        const std::uint64_t* from = row(d);
        for (std::size_t w = 0; w < words_; ++w) have[w] |= from[w];
        for_payload(ops[static_cast<std::size_t>(d)], world_size,
                    [&](int owner, int group) { set(have, index_of(owner, group)); });
      }
    }
  }

  [[nodiscard]] bool has(int op, int owner, int group) const {
    const std::size_t i = index_of(owner, group);
    return i < keys_.size() && test(op, i);
  }

  // Calls f(owner, group) for every payload op has, in (owner, group) order.
  template <typename F>
  void for_each(int op, F f) const {
    for (std::size_t i = 0; i < keys_.size(); ++i) {
      if (test(op, i)) f(keys_[i].first, keys_[i].second);
    }
  }

  // Calls f(group) for every payload of `owner` that op has, in group order.
  template <typename F>
  void for_owner(int op, int owner, F f) const {
    auto it = std::lower_bound(keys_.begin(), keys_.end(), std::pair<int, int>{owner, INT32_MIN});
    for (; it != keys_.end() && it->first == owner; ++it) {
      if (test(op, static_cast<std::size_t>(it - keys_.begin()))) f(it->second);
    }
  }

 private:
  // What `op` itself delivers to the ops that depend on it: a recv its KV owner's payload of its group; an
  // all-gather or all-to-all every member's (of the group's sequences when it names one, of any
  // sequence, group −1, when it does not).
  template <typename F>
  static void for_payload(const Op& op, int world_size, F f) {
    if (op.kind == OpKind::recv && op.kv_owner >= 0) f(op.kv_owner, op.group);
    if (op.kind == OpKind::collective &&
        (op.collective == CollectiveKind::all_gather || op.collective == CollectiveKind::all_to_all)) {
      for (int member : op.collective_ranks) {
        if (member >= 0 && member < world_size) f(member, op.group);
      }
    }
  }

  // The key's index, or keys_.size() when the rank never receives that payload.
  [[nodiscard]] std::size_t index_of(int owner, int group) const {
    const std::pair<int, int> key{owner, group};
    const auto it = std::lower_bound(keys_.begin(), keys_.end(), key);
    return it != keys_.end() && *it == key ? static_cast<std::size_t>(it - keys_.begin()) : keys_.size();
  }
  std::uint64_t* row(int op) { return bits_.data() + static_cast<std::size_t>(op) * words_; }
  [[nodiscard]] bool test(int op, std::size_t i) const {
    return (bits_[static_cast<std::size_t>(op) * words_ + i / 64] >> (i % 64)) & 1U;
  }
  static void set(std::uint64_t* row, std::size_t i) { row[i / 64] |= std::uint64_t{1} << (i % 64); }

  std::vector<std::pair<int, int>> keys_;  // sorted (owner, group) pairs this rank receives
  std::size_t words_ = 1;
  std::vector<std::uint64_t> bits_;  // ops × words_
};

}  // namespace zb::plan
