#include "core/plan/coverage.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "core/cost/cost_model.hpp"
#include "core/plan/key_index.hpp"
#include "core/plan/received_payloads.hpp"

namespace zb::plan {
namespace {

using OwnerMap = std::map<int, Intervals>;  // seq -> owned token ranges, sorted and merged

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

// Head parallelism (Ulysses, USP): an all-to-all over a u-group trades sequence shards for head shards,
// so while attention runs each member holds, for its heads, the rows every member owns of the
// collective's sequences (its group's; without a group, its micro-batch's). Its queries and keys, and
// the K/V it sends around a USP ring, are those rows, so coverage counts them as the member's own.
void extend_by_all_to_alls(const Plan& plan, std::vector<OwnerMap>& owned) {
  const std::vector<OwnerMap> layout = owned;
  for (const auto& r : plan.ranks) {
    if (r.rank < 0 || static_cast<std::size_t>(r.rank) >= owned.size()) continue;
    for (const Op& op : r.ops) {
      if (op.kind != OpKind::collective || op.collective != CollectiveKind::all_to_all) continue;
      const Group* group = op.group >= 0 && static_cast<std::size_t>(op.group) < plan.groups.size()
                               ? &plan.groups[static_cast<std::size_t>(op.group)]
                               : nullptr;
      auto holds = [&](int seq) {
        if (group != nullptr)
          return std::find(group->sequences.begin(), group->sequences.end(), seq) != group->sequences.end();
        return seq >= 0 && static_cast<std::size_t>(seq) < plan.sequences.size() &&
               plan.sequences[static_cast<std::size_t>(seq)].micro_batch == op.micro_batch;
      };
      for (const int member : op.collective_ranks) {
        if (member == r.rank || member < 0 || static_cast<std::size_t>(member) >= layout.size()) continue;
        for (const auto& [seq, ranges] : layout[static_cast<std::size_t>(member)]) {
          if (!holds(seq)) continue;
          for (const auto& [b, e] : ranges) insert_merged(owned[static_cast<std::size_t>(r.rank)][seq], b, e);
        }
      }
    }
  }
}

std::int64_t pairs_of(const AttentionBlock& b) {
  return CostModel::attention_pairs(b.q0, b.q1, b.k0, b.k1, b.mask == Mask::causal);
}

std::string block_str(const AttentionBlock& b) {
  std::string out = "seq " + std::to_string(b.seq) + " q [" + std::to_string(b.q0) + ", " +
                    std::to_string(b.q1) + ") k [" + std::to_string(b.k0) + ", " + std::to_string(b.k1) +
                    ") " + to_string(b.mask);
  if (!b.heads.all())
    out += " heads [" + std::to_string(b.heads.begin) + ", " + std::to_string(b.heads.end) + ")";
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
          const std::string prefix =
              heads_label.empty() ? "" : "sequence " + std::to_string(seq) + " " + heads_label + ": ";
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
  return h1 - h0 == 1 ? "head " + std::to_string(h0)
                      : "heads " + std::to_string(h0) + "-" + std::to_string(h1 - 1);
}

// Coverage when some blocks of a sequence compute only some heads: the heads are cut at every range
// boundary, and each interval of heads must be covered exactly once by the blocks that compute all of it
// (blocks for heads [0, 4) on one rank and [4, 8) on another cover the sequence once).
void check_exactly_once_per_head(const Plan& plan, int seq, const std::vector<AttentionBlock>& blocks,
                                 int heads, std::vector<std::string>& problems, std::size_t max_problems) {
  auto add = [&](std::string p) {
    if (problems.size() < max_problems) problems.push_back(std::move(p));
  };
  if (heads <= 0) {
    add("sequence " + std::to_string(seq) +
        ": blocks compute head ranges, but the model's head count was not given to verify");
    return;
  }
  std::vector<std::pair<int, int>> range(blocks.size());  // resolved [begin, end) of each block
  std::set<int> cuts{0, heads};
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const HeadRange& h = blocks[i].heads;
    range[i] = {h.begin, h.end < 0 ? heads : h.end};
    if (range[i].first < 0 || range[i].first >= range[i].second || range[i].second > heads) {
      add("sequence " + std::to_string(seq) + ": block " + block_str(blocks[i]) +
          " names heads outside the model's " + std::to_string(heads));
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

// A group's zigzag ring-form attention ops. With thousands of short documents in one ring over 64 GPUs,
// expanding every op into blocks (P² block pairs per document, 11 million blocks) made verification take
// a minute. The ring form is exact by construction when every (query position, KV position) pair of the
// group is computed exactly once, on every head, and no other block touches its sequences: each rank's
// two chunks against each rank's two chunks then tile the causal triangle. So the ledger counts those
// pairs, and only a group that breaks the rule is expanded and checked block by block (which also names
// the overlap or the gap).
struct RingLedger {
  int parts = 0;
  std::vector<int> pair_count;                        // [q_pos · parts + kv_pos]
  std::vector<std::pair<int, const Op*>> unexpanded;  // (rank, op) whose blocks are not in per_seq yet
  bool by_pairs = true;  // false once an op names a head range or failed its data check
};

void check_coverage_and_data(const Plan& plan, int heads, std::vector<std::string>& problems,
                             std::size_t max_problems) {
  auto add = [&](std::string p) {
    if (problems.size() < max_problems) problems.push_back(std::move(p));
  };
  std::vector<OwnerMap> owned;
  for (const auto& l : plan.attention_layout) owned.push_back(owner_map(l));
  extend_by_all_to_alls(plan, owned);
  // Which groups hold each sequence (usually one), so that a payload's group is checked without
  // searching the group's list of thousands of documents for each block.
  std::vector<std::vector<int>> seq_groups(plan.sequences.size());
  for (std::size_t g = 0; g < plan.groups.size(); ++g) {
    for (int seq : plan.groups[g].sequences) {
      if (seq >= 0 && static_cast<std::size_t>(seq) < seq_groups.size())
        seq_groups[static_cast<std::size_t>(seq)].push_back(static_cast<int>(g));
    }
  }
  auto in_group = [&](int g, int seq) {
    const auto& gs = seq_groups[static_cast<std::size_t>(seq)];
    return std::find(gs.begin(), gs.end(), g) != gs.end();
  };
  const KeyIndex key_index(owned, plan.sequences.size());
  auto owns = [](const std::vector<int>& owners, int rank) {
    return std::find(owners.begin(), owners.end(), rank) != owners.end();
  };
  // Whether `rank`, at position `pos` of group g, owns its zigzag chunks of every sequence of g (memoised).
  std::map<std::pair<int, int>, bool> owns_chunks_memo;
  auto owns_ring_chunks = [&](int g, int rank, int pos) {
    const auto [it, fresh] = owns_chunks_memo.try_emplace({g, rank}, true);
    if (!fresh) return it->second;
    const Group& group = plan.groups[static_cast<std::size_t>(g)];
    const int parts = static_cast<int>(group.ranks.size());
    for (int seq : group.sequences) {
      if (seq < 0 || static_cast<std::size_t>(seq) >= plan.sequences.size()) return it->second = false;
      const auto [a, b] =
          zigzag_shards(seq, plan.sequences[static_cast<std::size_t>(seq)].length, parts, pos);
      for (const Shard& c : {a, b}) {
        if (c.size() > 0 && !owns(key_index.owners_of(seq, c.begin, c.end), rank)) return it->second = false;
      }
    }
    return it->second;
  };
  std::map<int, RingLedger> rings;

  std::vector<std::vector<AttentionBlock>> per_seq(plan.sequences.size());
  // Every block of one op, checked against what the rank owns and has received, kept for coverage.
  auto check_blocks = [&](const std::string& where, int rank, const Op& op, const ReceivedPayloads& have) {
    for (AttentionBlock& b : expand_blocks(plan, rank, op)) {
      if (op.zigzag_kv_rank >= 0) b.heads = op.heads;  // the ring form's blocks compute the op's heads
      if (b.seq < 0 || b.seq >= static_cast<int>(plan.sequences.size())) {
        add(where + ": block names unknown sequence " + std::to_string(b.seq));
        continue;
      }
      const auto len = plan.sequences[static_cast<std::size_t>(b.seq)].length;
      if (b.q0 < 0 || b.q1 > len || b.k0 < 0 || b.k1 > len || b.q0 >= b.q1 || b.k0 >= b.k1) {
        add(where + ": block " + block_str(b) + " lies outside the sequence of length " +
            std::to_string(len));
        continue;
      }
      if (b.mask == Mask::full && b.k1 > b.q0 + 1)
        add(where + ": full block " + block_str(b) + " reads future keys");
      if (!owns(key_index.owners_of(b.seq, b.q0, b.q1), rank)) {
        add(where + ": computes queries of " + block_str(b) + " that the rank does not own");
      }
      // A received payload counts for this block when its group, if it names one, holds the sequence.
      auto counts = [&](int g, int owner) {
        return owned[static_cast<std::size_t>(owner)].contains(b.seq) && (g < 0 || in_group(g, b.seq));
      };
      // Fast path: the ranks whose own range holds all of [k0, k1), found in the sequence's key index,
      // and whether this rank is one or received one of them (not a scan of every payload per block).
      const std::vector<int> key_owners = key_index.owners_of(b.seq, b.k0, b.k1);
      bool kv_ok = owns(key_owners, rank);
      for (std::size_t o = 0; !kv_ok && o < key_owners.size(); ++o) {
        const int owner = key_owners[o];
        have.for_owner(op.id, owner, [&](int g) { kv_ok = kv_ok || g < 0 || in_group(g, b.seq); });
      }
      if (!kv_ok) {  // keys that no single source holds may still be held between them
        std::vector<const OwnerMap*> sources{&owned[static_cast<std::size_t>(rank)]};
        have.for_each(op.id, [&](int owner, int g) {
          if (counts(g, owner)) sources.push_back(&owned[static_cast<std::size_t>(owner)]);
        });
        kv_ok = union_contains(sources, b.seq, b.k0, b.k1);
      }
      if (!kv_ok) add(where + ": reads keys of " + block_str(b) + " that are neither local nor received");
      per_seq[static_cast<std::size_t>(b.seq)].push_back(b);
    }
  };
  // A ring-form op whose queries and keys check out without expanding it: the rank owns its chunks of the
  // group, and the KV rank is itself or one whose payload of the group (or of any group) it received.
  auto ring_op_data_ok = [&](int rank, const Op& op, const ReceivedPayloads& have, int q_pos, int kv_pos) {
    if (q_pos < 0 || kv_pos < 0 || !owns_ring_chunks(op.group, rank, q_pos)) return false;
    if (op.zigzag_kv_rank == rank) return true;
    const bool received =
        have.has(op.id, op.zigzag_kv_rank, op.group) || have.has(op.id, op.zigzag_kv_rank, -1);
    return received && owns_ring_chunks(op.group, op.zigzag_kv_rank, kv_pos);
  };

  for (const auto& r : plan.ranks) {
    const ReceivedPayloads received(r.ops, plan.world_size);
    for (const Op& op : r.ops) {
      const std::string where = "rank " + std::to_string(r.rank) + " op " + std::to_string(op.id);
      if (op.kind == OpKind::send && op.kv_owner >= 0 && op.kv_owner != r.rank &&
          !received.has(op.id, op.kv_owner, op.group)) {
        add(where + ": sends rank " + std::to_string(op.kv_owner) + "'s KV of group " +
            std::to_string(op.group) + " before receiving it");
      }
      if (op.kind != OpKind::attention) continue;
      const bool ring_form =
          op.zigzag_kv_rank >= 0 && op.group >= 0 && static_cast<std::size_t>(op.group) < plan.groups.size();
      if (!ring_form) {
        check_blocks(where, r.rank, op, received);
        continue;
      }
      const Group& g = plan.groups[static_cast<std::size_t>(op.group)];
      RingLedger& ledger = rings[op.group];
      if (ledger.parts == 0) {
        ledger.parts = static_cast<int>(g.ranks.size());
        ledger.pair_count.assign(static_cast<std::size_t>(ledger.parts * ledger.parts), 0);
      }
      const int q_pos = position_in(g, r.rank), kv_pos = position_in(g, op.zigzag_kv_rank);
      ledger.by_pairs = ledger.by_pairs && op.heads.all();
      if (ring_op_data_ok(r.rank, op, received, q_pos, kv_pos)) {
        ++ledger.pair_count[static_cast<std::size_t>(q_pos * ledger.parts + kv_pos)];
        ledger.unexpanded.emplace_back(r.rank, &op);
      } else {  // checked block by block, which names what is wrong; the group is then checked that way too
        check_blocks(where, r.rank, op, received);
        ledger.by_pairs = false;
      }
    }
  }
  std::vector<bool> settled(plan.sequences.size(),
                            false);  // covered exactly once by a ring, no blocks needed
  for (auto& [g, ledger] : rings) {
    const auto& seqs = plan.groups[static_cast<std::size_t>(g)].sequences;
    bool exact = ledger.by_pairs && std::all_of(ledger.pair_count.begin(), ledger.pair_count.end(),
                                                [](int c) { return c == 1; });
    for (std::size_t i = 0; exact && i < seqs.size(); ++i) {
      const auto seq = static_cast<std::size_t>(seqs[i]);
      exact = per_seq[seq].empty() && seq_groups[seq].size() == 1;
    }
    if (exact) {
      for (int seq : seqs) settled[static_cast<std::size_t>(seq)] = true;
      continue;
    }
    for (const auto& [rank, op] : ledger.unexpanded) {
      for (AttentionBlock& b : expand_blocks(plan, rank, *op)) {
        b.heads = op->heads;
        per_seq[static_cast<std::size_t>(b.seq)].push_back(b);
      }
    }
  }
  for (std::size_t s = 0; s < per_seq.size() && problems.size() < max_problems; ++s) {
    if (settled[s]) continue;
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
    const std::string what = "remap move of seq " + std::to_string(m.range.seq) + " [" +
                             std::to_string(m.range.begin) + ", " + std::to_string(m.range.end) +
                             ") from rank " + std::to_string(m.src) + " to rank " + std::to_string(m.dst);
    if (m.src < 0 || m.src >= plan.world_size || m.dst < 0 || m.dst >= plan.world_size) {
      add(what + ": invalid rank");
      continue;
    }
    if (!contains(attn[static_cast<std::size_t>(m.src)], m.range.seq, m.range.begin, m.range.end))
      add(what + ": the source does not own it in the attention layout");
    if (!contains(lin[static_cast<std::size_t>(m.dst)], m.range.seq, m.range.begin, m.range.end))
      add(what + ": the destination does not own it in the linear layout");
    balance[static_cast<std::size_t>(m.src)] -= m.range.size();
    balance[static_cast<std::size_t>(m.dst)] += m.range.size();
  }
  for (int r = 0; r < plan.world_size; ++r) {
    if (balance[static_cast<std::size_t>(r)] != 0) {
      add("rank " + std::to_string(r) +
          ": attention layout minus remap moves differs from its linear layout by " +
          std::to_string(balance[static_cast<std::size_t>(r)]) + " tokens");
    }
  }
}

}  // namespace zb::plan
