// Head-parallel all-to-alls (DeepSpeed-Ulysses, USP; docs/STRATEGIES.md § ulysses). A plan all_to_all op
// over a u-group trades sequence shards for head shards: before attention each member sends every other
// member the Q, K and V rows of its own tokens for the heads that member computes; after attention each
// member sends every other member the O rows of that member's tokens for its own heads. The plan states
// the pieces (plan::coverage reads them the same way):
//   * a member's tokens: its attention-layout shards of the collective's sequences (its group's; without
//     a group, those of its micro-batch);
//   * a member's heads: the head range of its attention ops of those sequences (of the micro-batch
//     without a group);
//   * which way: an all-to-all that depends (within its micro-batch) on an attention op brings O back;
//     one that does not brings Q, K and V in.
// The lowering gives each such collective one message per ordered pair of members naming exactly those
// rows and heads, so an executor on real rows moves what the Program says; the backward's adjoints (dO
// out to the heads' owners, dQ/dK/dV back to the tokens' owners) are the reversed messages
// (build_backward_messages). Time stays the collective's (u−1 steps of bytes/(u−1)), as before.
#include <algorithm>
#include <set>

#include "core/lower/lowerer.hpp"

namespace zb::lower::detail {
namespace {

using plan::Op;
using plan::OpKind;

// Whether op `id` of `ops` depends, through ops of its own micro-batch, on an attention op.
bool follows_attention(const std::vector<Op>& ops, int id) {
  const int mb = ops[static_cast<std::size_t>(id)].micro_batch;
  std::vector<int> stack = ops[static_cast<std::size_t>(id)].deps;
  std::set<int> seen;
  while (!stack.empty()) {
    const int d = stack.back();
    stack.pop_back();
    if (d < 0 || static_cast<std::size_t>(d) >= ops.size() || !seen.insert(d).second) continue;
    const Op& dep = ops[static_cast<std::size_t>(d)];
    if (dep.micro_batch != mb) continue;
    if (dep.kind == OpKind::attention) return true;
    stack.insert(stack.end(), dep.deps.begin(), dep.deps.end());
  }
  return false;
}

}  // namespace

plan::HeadRange Lowerer::member_heads(int rank, const Collective& col, int collective) const {
  // The attention ops that read what the collective trades: those of its group, or of a group holding the
  // same sequences (a ring of USP's head slices lists its u-group's), or, without a group, of its
  // micro-batch.
  const auto reads_them = [&](const Op& op) {
    if (col.group < 0 || op.group == col.group) return true;
    if (op.group < 0 || static_cast<std::size_t>(op.group) >= plan_.groups.size()) return false;
    return plan_.groups[static_cast<std::size_t>(op.group)].sequences ==
           plan_.groups[static_cast<std::size_t>(col.group)].sequences;
  };
  std::set<std::pair<int, int>> ranges;
  for (const Op& op : plan_.ranks[static_cast<std::size_t>(rank)].ops) {
    if (op.kind == OpKind::attention && op.micro_batch == col.micro_batch && reads_them(op))
      ranges.insert({op.heads.begin, op.heads.end});
  }
  if (ranges.size() != 1 || plan::HeadRange{ranges.begin()->first, ranges.begin()->second}.all()) {
    fail(
        rank, -1,
        "its part of head all-to-all " + std::to_string(collective) + " (micro-batch " +
            std::to_string(col.micro_batch) +
            ") needs its attention ops of the collective's sequences to compute one slice of the heads; they "
            "compute " +
            std::to_string(ranges.size()) + " different head ranges" +
            (ranges.size() == 1 ? " (every head)" : ""));
  }
  return {ranges.begin()->first, ranges.begin()->second};
}

std::vector<plan::Shard> Lowerer::member_tokens(int rank, const Collective& col) const {
  const auto holds = [&](int seq) {
    if (col.group >= 0) {
      const auto& seqs = plan_.groups[static_cast<std::size_t>(col.group)].sequences;
      return std::find(seqs.begin(), seqs.end(), seq) != seqs.end();
    }
    return plan_.sequences[static_cast<std::size_t>(seq)].micro_batch == col.micro_batch;
  };
  std::vector<plan::Shard> out;
  for (const plan::Shard& s : plan_.attention_layout[static_cast<std::size_t>(rank)].shards) {
    if (s.size() > 0 && s.seq >= 0 && static_cast<std::size_t>(s.seq) < plan_.sequences.size() &&
        holds(s.seq))
      out.push_back(s);
  }
  return out;
}

void Lowerer::build_head_all_to_alls() {
  std::map<int, std::vector<std::pair<int, const Op*>>>
      member_ops;  // collective → (rank, its op), in rank order
  for (int r = 0; r < plan_.world_size; ++r) {
    const auto& ops = plan_.ranks[static_cast<std::size_t>(r)].ops;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].kind != OpKind::collective || ops[i].collective != plan::CollectiveKind::all_to_all)
        continue;
      member_ops[op_collective_[static_cast<std::size_t>(r)][i]].emplace_back(r, &ops[i]);
    }
  }
  for (const auto& [c, members] : member_ops) {
    Collective& col = prog_.collectives[static_cast<std::size_t>(c)];
    if (col.group >= static_cast<int>(plan_.groups.size())) {
      fail(col.ranks.front(), -1,
           "its all-to-all names group " + std::to_string(col.group) + ", which the plan does not have");
    }
    // Which way it goes: every member's op must agree (the Q/K/V one before attention, the O one after).
    std::set<bool> back;
    for (const auto& [r, op] : members)
      back.insert(follows_attention(plan_.ranks[static_cast<std::size_t>(r)].ops, op->id));
    if (back.size() != 1) {
      fail(members.front().first, members.front().second->id,
           "head all-to-all " + std::to_string(c) +
               " follows attention on some members and precedes it on others");
    }
    const bool to_linear = *back.begin();
    col.direction = to_linear ? plan::RemapDirection::to_linear : plan::RemapDirection::to_attention;
    std::map<int, plan::HeadRange> heads;
    std::map<int, std::vector<plan::Shard>> tokens;
    for (const auto& [r, op] : members) {
      heads[r] = member_heads(r, col, c);
      tokens[r] = member_tokens(r, col);
    }
    for (const auto& [from, op] : members) {
      std::int64_t sent_rows = 0;  // to split the op's bytes over its messages
      for (const auto& [to, unused] : members) {
        if (to == from) continue;
        for (const plan::Shard& s : tokens[to_linear ? to : from]) sent_rows += s.size();
      }
      for (const auto& [to, unused] : members) {
        if (to == from) continue;
        Message m;
        m.pass = Pass::fwd;
        m.purpose = Purpose::remap;
        m.src = from;
        m.dst = to;
        m.group = col.group;
        m.micro_batch = col.micro_batch;
        // Q/K/V: the sender's tokens for the receiver's heads; O: the receiver's tokens for the sender's.
        const std::vector<plan::Shard>& rows = tokens[to_linear ? to : from];
        const plan::HeadRange slice = heads[to_linear ? from : to];
        std::int64_t message_rows = 0;
        if (options_.rows) {
          std::vector<Slice> slices;
          for (const Tensor t : to_linear ? std::vector<Tensor>{Tensor::O}
                                          : std::vector<Tensor>{Tensor::Q, Tensor::K, Tensor::V}) {
            for (const plan::Shard& s : rows) slices.push_back({t, s.seq, s.begin, s.end, slice});
          }
          m.slices = SliceList(std::move(slices));
        }
        for (const plan::Shard& s : rows) message_rows += s.size();
        m.bytes = sent_rows > 0
                      ? std::llround(static_cast<double>(op->bytes) * static_cast<double>(message_rows) /
                                     static_cast<double>(sent_rows))
                      : 0;
        m.plan_op = op->id;
        m.collective = c;
        col.messages.push_back(static_cast<int>(prog_.messages.size()));
        prog_.messages.push_back(std::move(m));
        routes_.emplace_back();  // it travels inside its collective, without legs
      }
    }
  }
}

}  // namespace zb::lower::detail
