#include "core/plan/coverage.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "core/cost/cost_model.hpp"

namespace zb::plan {
namespace {

using Intervals = std::vector<std::pair<std::int64_t, std::int64_t>>;  // sorted, merged
using OwnerMap = std::map<int, Intervals>;                              // seq -> owned token ranges

void insert_merged(Intervals& iv, std::int64_t b, std::int64_t e) {
  if (b >= e) return;
  iv.emplace_back(b, e);
  std::sort(iv.begin(), iv.end());
  Intervals merged;
  for (const auto& [x, y] : iv) {
    if (!merged.empty() && x <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, y);
    } else {
      merged.emplace_back(x, y);
    }
  }
  iv.swap(merged);
}

bool contains(const OwnerMap& owned, int seq, std::int64_t b, std::int64_t e) {
  const auto it = owned.find(seq);
  if (it == owned.end()) return false;
  for (const auto& [x, y] : it->second) {
    if (x <= b && e <= y) return true;
  }
  return false;
}

// Whether [b, e) of `seq` lies in the union of the maps' ranges (a block whose keys several owners hold
// between them, as after a K/V all-gather): each pass moves `b` to the end of a range that holds it.
bool union_contains(const std::vector<const OwnerMap*>& maps, int seq, std::int64_t b, std::int64_t e) {
  while (b < e) {
    std::int64_t next = b;
    for (const OwnerMap* m : maps) {
      const auto it = m->find(seq);
      if (it == m->end()) continue;
      for (const auto& [x, y] : it->second)
        if (x <= b && b < y) next = std::max(next, y);
    }
    if (next == b) return false;
    b = next;
  }
  return true;
}

OwnerMap owner_map(const RankLayout& layout) {
  OwnerMap m;
  for (const auto& s : layout.shards) insert_merged(m[s.seq], s.begin, s.end);
  return m;
}

std::int64_t pairs_of(const AttentionBlock& b) {
  return CostModel::attention_pairs(b.q0, b.q1, b.k0, b.k1, b.mask == Mask::causal);
}

std::string block_str(const AttentionBlock& b) {
  std::string out = "seq " + std::to_string(b.seq) + " q [" + std::to_string(b.q0) + ", " + std::to_string(b.q1) +
                    ") k [" + std::to_string(b.k0) + ", " + std::to_string(b.k1) + ") " + to_string(b.mask);
  if (!b.heads.all()) out += " heads [" + std::to_string(b.heads.begin) + ", " + std::to_string(b.heads.end) + ")";
  return out;
}

// Reports a pair of blocks of one sequence that compute a common (q, k) pair, and pairs never computed.
// `heads_label` ("head 5", "heads 4-7") names the heads these blocks stand for; empty = every head.
void check_exactly_once(const Plan& plan, int seq, std::vector<AttentionBlock>& blocks,
                        std::vector<std::string>& problems, std::size_t max_problems,
                        const std::string& heads_label = {}) {
  const std::int64_t s = plan.sequences[static_cast<std::size_t>(seq)].length;
  std::int64_t total = 0;
  for (const auto& b : blocks) total += pairs_of(b);
  const std::int64_t expected = s * (s + 1) / 2;
  std::sort(blocks.begin(), blocks.end(), [](const auto& a, const auto& b) { return a.q0 < b.q0; });
  std::vector<const AttentionBlock*> active;
  for (const auto& b : blocks) {
    std::erase_if(active, [&](const AttentionBlock* a) { return a->q1 <= b.q0; });
    for (const AttentionBlock* a : active) {
      const auto q0 = std::max(a->q0, b.q0), q1 = std::min(a->q1, b.q1);
      const auto k0 = std::max(a->k0, b.k0), k1 = std::min(a->k1, b.k1);
      const bool causal = a->mask == Mask::causal || b.mask == Mask::causal;
      if (q0 < q1 && k0 < k1 && CostModel::attention_pairs(q0, q1, k0, k1, causal) > 0) {
        if (problems.size() < max_problems) {
          const std::string prefix = heads_label.empty() ? "" : "sequence " + std::to_string(seq) + " " + heads_label + ": ";
          problems.push_back(prefix + "blocks overlap: " + block_str(*a) + " and " + block_str(b));
        }
        return;
      }
    }
    active.push_back(&b);
  }
  if (total != expected && problems.size() < max_problems) {
    problems.push_back("sequence " + std::to_string(seq) + " of length " + std::to_string(s) +
                       (heads_label.empty() ? "" : ", " + heads_label) + ": blocks cover " +
                       std::to_string(total) + " causal pairs, expected " + std::to_string(expected) +
                       (total < expected ? " (some pairs are never computed)" : ""));
  }
}

std::string heads_label(int h0, int h1) {
  return h1 - h0 == 1 ? "head " + std::to_string(h0) : "heads " + std::to_string(h0) + "-" + std::to_string(h1 - 1);
}

// Coverage when some blocks of a sequence compute only some heads: the heads are cut at every range
// boundary, and each interval of heads must be covered exactly once by the blocks that compute all of it
// (blocks for heads [0, 4) on one rank and [4, 8) on another cover the sequence once).
void check_exactly_once_per_head(const Plan& plan, int seq, const std::vector<AttentionBlock>& blocks, int heads,
                                 std::vector<std::string>& problems, std::size_t max_problems) {
  auto add = [&](std::string p) {
    if (problems.size() < max_problems) problems.push_back(std::move(p));
  };
  if (heads <= 0) {
    add("sequence " + std::to_string(seq) + ": blocks compute head ranges, but the model's head count was not given to verify");
    return;
  }
  std::vector<std::pair<int, int>> range(blocks.size());  // resolved [begin, end) of each block
  std::set<int> cuts{0, heads};
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const HeadRange& h = blocks[i].heads;
    range[i] = {h.begin, h.end < 0 ? heads : h.end};
    if (range[i].first < 0 || range[i].first >= range[i].second || range[i].second > heads) {
      add("sequence " + std::to_string(seq) + ": block " + block_str(blocks[i]) + " names heads outside the model's " +
          std::to_string(heads));
      return;
    }
    cuts.insert(range[i].first);
    cuts.insert(range[i].second);
  }
  for (auto it = cuts.begin(); std::next(it) != cuts.end() && problems.size() < max_problems; ++it) {
    const int h0 = *it, h1 = *std::next(it);
    std::vector<AttentionBlock> covering;
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      if (range[i].first <= h0 && h1 <= range[i].second) covering.push_back(blocks[i]);
    }
    check_exactly_once(plan, seq, covering, problems, max_problems, heads_label(h0, h1));
  }
}

}  // namespace

void check_coverage_and_data(const Plan& plan, int heads, std::vector<std::string>& problems,
                             std::size_t max_problems) {
  auto add = [&](std::string p) {
    if (problems.size() < max_problems) problems.push_back(std::move(p));
  };
  std::vector<OwnerMap> owned;
  for (const auto& l : plan.attention_layout) owned.push_back(owner_map(l));

  std::vector<std::vector<AttentionBlock>> per_seq(plan.sequences.size());
  for (const auto& r : plan.ranks) {
    // For each op, the (group, kv_owner) payloads that reached this rank through recv ops it depends on.
    std::vector<std::set<std::pair<int, int>>> received(r.ops.size());
    for (const Op& op : r.ops) {
      auto& have = received[static_cast<std::size_t>(op.id)];
      for (int d : op.deps) {
        if (d < 0 || d >= op.id) continue;  // reported by check_dag
        const auto& from = received[static_cast<std::size_t>(d)];
        have.insert(from.begin(), from.end());
        const Op& dep = r.ops[static_cast<std::size_t>(d)];
        if (dep.kind == OpKind::recv && dep.kv_owner >= 0) have.insert({dep.group, dep.kv_owner});
        // An all-gather (Llama-3 CP's K/V) or all-to-all (head parallelism) brings every member's KV; of the
        // group's sequences when the op names a group, of any sequence (group −1) when it does not.
        if (dep.kind == OpKind::collective &&
            (dep.collective == CollectiveKind::all_gather || dep.collective == CollectiveKind::all_to_all)) {
          for (int member : dep.collective_ranks) {
            if (member >= 0 && member < plan.world_size) have.insert({dep.group, member});
          }
        }
      }
      const std::string where = "rank " + std::to_string(r.rank) + " op " + std::to_string(op.id);
      if (op.kind == OpKind::send && op.kv_owner >= 0 && op.kv_owner != r.rank && !have.contains({op.group, op.kv_owner})) {
        add(where + ": sends rank " + std::to_string(op.kv_owner) + "'s KV of group " + std::to_string(op.group) + " before receiving it");
      }
      if (op.kind != OpKind::attention) continue;
      for (AttentionBlock& b : expand_blocks(plan, r.rank, op)) {
        if (op.zigzag_kv_rank >= 0) b.heads = op.heads;  // the ring form's blocks compute the op's heads
        if (b.seq < 0 || b.seq >= static_cast<int>(plan.sequences.size())) {
          add(where + ": block names unknown sequence " + std::to_string(b.seq));
          continue;
        }
        const auto len = plan.sequences[static_cast<std::size_t>(b.seq)].length;
        if (b.q0 < 0 || b.q1 > len || b.k0 < 0 || b.k1 > len || b.q0 >= b.q1 || b.k0 >= b.k1) {
          add(where + ": block " + block_str(b) + " lies outside the sequence of length " + std::to_string(len));
          continue;
        }
        if (b.mask == Mask::full && b.k1 > b.q0 + 1) add(where + ": full block " + block_str(b) + " reads future keys");
        if (!contains(owned[static_cast<std::size_t>(r.rank)], b.seq, b.q0, b.q1)) {
          add(where + ": computes queries of " + block_str(b) + " that the rank does not own");
        }
        bool kv_ok = contains(owned[static_cast<std::size_t>(r.rank)], b.seq, b.k0, b.k1);
        for (const auto& [g, owner] : have) {
          if (kv_ok) break;
          if (g >= 0) {
            const auto& gs = plan.groups.at(static_cast<std::size_t>(g)).sequences;
            if (std::find(gs.begin(), gs.end(), b.seq) == gs.end()) continue;
          }
          kv_ok = contains(owned[static_cast<std::size_t>(owner)], b.seq, b.k0, b.k1);
        }
        if (!kv_ok) {  // keys that no single source holds may still be held between them
          std::vector<const OwnerMap*> sources{&owned[static_cast<std::size_t>(r.rank)]};
          for (const auto& [g, owner] : have) {
            if (g >= 0) {
              const auto& gs = plan.groups.at(static_cast<std::size_t>(g)).sequences;
              if (std::find(gs.begin(), gs.end(), b.seq) == gs.end()) continue;
            }
            sources.push_back(&owned[static_cast<std::size_t>(owner)]);
          }
          kv_ok = union_contains(sources, b.seq, b.k0, b.k1);
        }
        if (!kv_ok) add(where + ": reads keys of " + block_str(b) + " that are neither local nor received");
        per_seq[static_cast<std::size_t>(b.seq)].push_back(b);
      }
    }
  }
  for (std::size_t s = 0; s < per_seq.size() && problems.size() < max_problems; ++s) {
    auto& blocks = per_seq[s];
    // The common case, every block on every head, stays one pass over the sequence's blocks.
    if (std::all_of(blocks.begin(), blocks.end(), [](const AttentionBlock& b) { return b.heads.all(); })) {
      check_exactly_once(plan, static_cast<int>(s), blocks, problems, max_problems);
    } else {
      check_exactly_once_per_head(plan, static_cast<int>(s), blocks, heads, problems, max_problems);
    }
  }
}

void check_remap(const Plan& plan, std::vector<std::string>& problems, std::size_t max_problems) {
  auto add = [&](std::string p) {
    if (problems.size() < max_problems) problems.push_back(std::move(p));
  };
  std::vector<OwnerMap> attn, lin;
  for (const auto& l : plan.attention_layout) attn.push_back(owner_map(l));
  for (const auto& l : plan.linear_layout) lin.push_back(owner_map(l));
  std::vector<std::int64_t> balance(static_cast<std::size_t>(plan.world_size), 0);
  for (int r = 0; r < plan.world_size; ++r) {
    balance[static_cast<std::size_t>(r)] = plan.attention_layout[static_cast<std::size_t>(r)].tokens() -
                                           plan.linear_layout[static_cast<std::size_t>(r)].tokens();
  }
  for (const auto& m : plan.remap) {
    const std::string what = "remap move of seq " + std::to_string(m.range.seq) + " [" + std::to_string(m.range.begin) +
                             ", " + std::to_string(m.range.end) + ") from rank " + std::to_string(m.src) + " to rank " +
                             std::to_string(m.dst);
    if (m.src < 0 || m.src >= plan.world_size || m.dst < 0 || m.dst >= plan.world_size) {
      add(what + ": invalid rank");
      continue;
    }
    if (!contains(attn[static_cast<std::size_t>(m.src)], m.range.seq, m.range.begin, m.range.end)) add(what + ": the source does not own it in the attention layout");
    if (!contains(lin[static_cast<std::size_t>(m.dst)], m.range.seq, m.range.begin, m.range.end)) add(what + ": the destination does not own it in the linear layout");
    balance[static_cast<std::size_t>(m.src)] -= m.range.size();
    balance[static_cast<std::size_t>(m.dst)] += m.range.size();
  }
  for (int r = 0; r < plan.world_size; ++r) {
    if (balance[static_cast<std::size_t>(r)] != 0) {
      add("rank " + std::to_string(r) + ": attention layout minus remap moves differs from its linear layout by " +
          std::to_string(balance[static_cast<std::size_t>(r)]) + " tokens");
    }
  }
}

}  // namespace zb::plan
