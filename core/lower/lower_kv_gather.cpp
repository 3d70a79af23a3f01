// Llama-3 CP's K/V all-gather (Llama 3 paper §3.3.2; TransformerEngine's AttnFuncWithCPAndKVAllGather).
// A plan all_gather op that names a CP group (`group` ≥ 0) gathers, onto every member, the K and V rows
// of the group's sequences that each other member holds (its zigzag chunks). The lowering gives that
// collective one message per ordered pair of members, so an executor on real rows knows what moves; its
// time stays the collective's (a ring of `bytes` steps, as for an opaque collective).
//
// Backward, as TransformerEngine does (it saves only the local K and V): the attention backward of the
// group re-gathers K/V first (a backward all_gather with the same messages), and the adjoint
// reduce-scatter then brings every member's partial dK|dV of a key row to the row's owner. An
// all_gather without a group is opaque (tensor parallelism's hidden states): no messages.
#include <algorithm>

#include "core/lower/lowerer.hpp"

namespace zb::lower::detail {

using plan::Op;
using plan::OpKind;

void Lowerer::build_kv_gathers() {
  // Each member's op of each K/V all-gather, by position in the collective's ranks.
  std::map<int, std::vector<const Op*>> member_ops;
  for (int r = 0; r < plan_.world_size; ++r) {
    const auto& ops = plan_.ranks[static_cast<std::size_t>(r)].ops;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].kind != OpKind::collective || ops[i].collective != plan::CollectiveKind::all_gather ||
          ops[i].group < 0)
        continue;
      const int c = op_collective_[static_cast<std::size_t>(r)][i];
      const Collective& col = prog_.collectives[static_cast<std::size_t>(c)];
      auto& slots = member_ops.try_emplace(c, col.ranks.size(), nullptr).first->second;
      const auto pos =
          static_cast<std::size_t>(std::find(col.ranks.begin(), col.ranks.end(), r) - col.ranks.begin());
      slots[pos] = &ops[i];
    }
  }
  for (const auto& [c, ops] : member_ops) {
    Collective& col = prog_.collectives[static_cast<std::size_t>(c)];
    const int group = col.group;
    if (static_cast<std::size_t>(group) >= plan_.groups.size()) {
      fail(col.ranks.front(), -1,
           "its all-gather names group " + std::to_string(group) + ", which the plan does not have");
    }
    const auto& group_ranks = plan_.groups[static_cast<std::size_t>(group)].ranks;
    for (std::size_t k = 0; k < col.ranks.size(); ++k) {
      if (ops[k] == nullptr) continue;  // reported by run(): a member without its instruction
      if (std::find(group_ranks.begin(), group_ranks.end(), col.ranks[k]) == group_ranks.end()) {
        fail(col.ranks[k], ops[k]->id,
             "all-gathers the K/V of group " + std::to_string(group) +
                 ", but this rank is not a rank of that group (it holds none of its K/V)");
      }
    }
    for (std::size_t from = 0; from < col.ranks.size(); ++from) {
      if (ops[from] == nullptr) continue;
      const Op& op = *ops[from];
      for (std::size_t to = 0; to < col.ranks.size(); ++to) {
        if (to == from) continue;
        Message m;
        m.pass = Pass::fwd;
        m.purpose = Purpose::kv;
        m.src = col.ranks[from];
        m.dst = col.ranks[to];
        m.group = group;
        m.micro_batch = col.micro_batch;
        m.kv_owner = m.src;
        m.slices = owner_slices(group, m.src, Tensor::K, Tensor::V, op.heads);
        m.bytes = op.bytes;
        m.plan_op = op.id;
        m.collective = c;
        const int id = static_cast<int>(prog_.messages.size());
        messages_into_[{c, m.dst}].push_back(id);
        col.messages.push_back(id);
        prog_.messages.push_back(std::move(m));
        routes_.emplace_back();  // it travels inside its collective, without legs
      }
    }
  }
}

int Lowerer::build_kv_gather_backward(int c, int adjoint) {
  // The reduce-scatter: forward message src → dst (K|V of src) becomes dst → src carrying dst's partial
  // dK|dV of src's rows. Slices come from the shared per-owner lists, not a copy per message (a group of
  // C ranks has C·(C−1) messages).
  const std::vector<int> forward = prog_.collectives[static_cast<std::size_t>(c)].messages;
  for (const int fm : forward) {
    Message m = prog_.messages[static_cast<std::size_t>(fm)];
    m.pass = Pass::bwd;
    m.purpose = Purpose::dkv;
    std::swap(m.src, m.dst);
    const plan::HeadRange heads = m.slices.empty() ? plan::HeadRange{} : m.slices.front().heads;
    m.slices = owner_slices(m.group, m.kv_owner, Tensor::dK, Tensor::dV, heads);
    m.plan_op = -1;
    m.readers = 0;
    m.collective = adjoint;
    const int id = static_cast<int>(prog_.messages.size());
    messages_into_[{adjoint, m.dst}].push_back(id);
    prog_.collectives[static_cast<std::size_t>(adjoint)].messages.push_back(id);
    prog_.messages.push_back(std::move(m));
    routes_.emplace_back();
  }
  // The re-gather: the forward all-gather again, in the backward pass.
  Collective again = prog_.collectives[static_cast<std::size_t>(c)];
  again.pass = Pass::bwd;
  again.instrs.assign(again.ranks.size(), -1);
  again.messages.clear();
  const int id = static_cast<int>(prog_.collectives.size());
  for (const int fm : forward) {
    Message m = prog_.messages[static_cast<std::size_t>(fm)];
    m.pass = Pass::bwd;
    m.plan_op = -1;
    m.readers = 0;
    m.collective = id;
    const int mid = static_cast<int>(prog_.messages.size());
    messages_into_[{id, m.dst}].push_back(mid);
    again.messages.push_back(mid);
    prog_.messages.push_back(std::move(m));
    routes_.emplace_back();
  }
  prog_.collectives.push_back(std::move(again));
  return id;
}

const std::vector<int>& Lowerer::messages_into(int collective, int rank) const {
  static const std::vector<int> none;
  const auto it = messages_into_.find({collective, rank});
  return it == messages_into_.end() ? none : it->second;
}

bool Lowerer::is_kv_gather(int collective) const {
  if (collective < 0) return false;
  const Collective& col = prog_.collectives[static_cast<std::size_t>(collective)];
  return col.kind == CollectiveKind::all_gather && col.group >= 0 && col.pass == Pass::fwd;
}

int Lowerer::kv_gather_of(int rank, int op) const {
  const int c = op_collective_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(op)];
  return is_kv_gather(c) ? c : -1;
}

int Lowerer::regather_instr(int rank, int c, const IdList& entry) {
  if (const auto it = regather_instr_.find({rank, c}); it != regather_instr_.end()) return it->second;
  const int again = regather_[static_cast<std::size_t>(c)];
  Collective& col = prog_.collectives[static_cast<std::size_t>(again)];
  const auto pos =
      static_cast<std::size_t>(std::find(col.ranks.begin(), col.ranks.end(), rank) - col.ranks.begin());
  // The forward op it repeats: the member's all-gather op (its plan op, name and bytes).
  const auto& ops = plan_.ranks[static_cast<std::size_t>(rank)].ops;
  int plan_op = -1;
  for (std::size_t i = 0; i < ops.size() && plan_op < 0; ++i) {
    if (op_collective_[static_cast<std::size_t>(rank)][i] == c) plan_op = static_cast<int>(i);
  }
  if (plan_op < 0)
    fail(rank, -1, "collective " + std::to_string(c) + " has no op on this member (a lowering fault)");
  const Op& op = ops[static_cast<std::size_t>(plan_op)];
  Instr in;
  in.kind = InstrKind::collective;
  in.stream = Stream::comm;
  in.pass = Pass::bwd;
  in.micro_batch = op.micro_batch;
  in.group = op.group;
  in.plan_op = plan_op;
  in.name = op.name + " again";
  in.deps = entry;
  in.collective = again;
  in.bytes = op.bytes;
  col.instrs[pos] = emit(rank, std::move(in));
  regather_instr_[{rank, c}] = col.instrs[pos];
  return col.instrs[pos];
}

}  // namespace zb::lower::detail
