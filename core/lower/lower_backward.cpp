// The backward pass, derived once from the forward ops of each rank.
//
// A rank's forward ops fall into units: all ops of one CP group (its attention steps and KV transfers)
// form one unit, every other op (GEMM, remap, collective) is a unit of its own. Backward runs the units
// in the reverse of their forward order; a unit's backward waits for the backward of every unit that
// consumed its forward output (the reversed data edges). Per unit:
//   * GEMM: its data gradient, then its weight gradient, each at half of backward_linear_factor × the
//     forward time; what came before waits for the data gradient only.
//   * remap: the inverse exchange of the gradients (dO back to the attention layout for to_linear; dQ,
//     dK, dV back to the linear layout for to_attention), the same rows and bytes, reversed.
//   * collective: its adjoint (all-gather ↔ reduce-scatter, all-reduce and all-to-all stay themselves).
//   * CP group, as TransformerEngine's ring backward: K/V travel the ring again exactly as forward, the
//     attention steps run in forward order at backward cost, and each owner's dK/dV accumulator follows
//     its K/V one step behind (a rank adds its partial and passes it on with the K/V it forwards); the
//     rank at the end of the owner's chain sends the finished dK/dV back to the owner. A dK/dV message
//     has the size of the K/V it belongs to and takes the same route.
#include <algorithm>
#include <climits>
#include <numeric>

#include "core/common/error.hpp"
#include "core/lower/lowerer.hpp"

namespace zb::lower::detail {

using plan::Op;
using plan::OpKind;

namespace {

CollectiveKind adjoint(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::all_gather:
      return CollectiveKind::reduce_scatter;
    case CollectiveKind::reduce_scatter:
      return CollectiveKind::all_gather;
    default:
      return k;
  }
}

Tensor gradient_of(Tensor t) {
  switch (t) {
    case Tensor::Q:
      return Tensor::dQ;
    case Tensor::K:
      return Tensor::dK;
    case Tensor::V:
      return Tensor::dV;
    case Tensor::O:
      return Tensor::dO;
    case Tensor::hidden:
      return Tensor::grad;
    default:
      return t;
  }
}

const plan::Route& route_of_send(const plan::Plan& plan, const Message& m) {
  static const plan::Route direct{};
  if (m.plan_op < 0) return direct;
  return plan.ranks[static_cast<std::size_t>(m.src)].ops[static_cast<std::size_t>(m.plan_op)].route;
}

}  // namespace

void Lowerer::build_backward_messages() {
  const std::size_t forward_messages = prog_.messages.size();
  bwd_kv_.assign(forward_messages, -1);
  dkv_.assign(forward_messages, -1);
  std::map<std::tuple<int, int, int>, int> forwarded;  // (src, group, owner) → forward KV message it sends
  std::map<std::tuple<int, int, int>, int> hop_to;  // (src, group, dst) → a forward KV message on that hop
  for (std::size_t mi = 0; mi < forward_messages; ++mi) {
    const Message fwd = prog_.messages[mi];
    if (fwd.purpose != Purpose::kv || fwd.collective >= 0)
      continue;  // a K/V all-gather's: with its collective
    const plan::Route& route = route_of_send(plan_, fwd);
    Message kv = fwd;
    kv.pass = Pass::bwd;
    kv.readers = 0;
    bwd_kv_[mi] = add_message(kv, route);
    if (fwd.kv_owner < 0) continue;  // an opaque transfer: no accumulator travels with it
    Message dkv = kv;
    dkv.purpose = Purpose::dkv;
    dkv.slices = owner_slices(fwd.group, fwd.kv_owner, Tensor::dK, Tensor::dV,
                              fwd.slices.empty() ? plan::HeadRange{} : fwd.slices.front().heads);
    dkv.plan_op = -1;
    dkv_[mi] = add_message(dkv, route);
    hop_to.try_emplace({fwd.src, fwd.group, fwd.dst}, static_cast<int>(mi));
    if (!forwarded.try_emplace({fwd.src, fwd.group, fwd.kv_owner}, static_cast<int>(mi)).second) {
      fail(fwd.src, fwd.plan_op,
           "forwards the KV of rank " + std::to_string(fwd.kv_owner) + " in group " +
               std::to_string(fwd.group) +
               " to a second peer; the backward derivation "
               "follows KV chains (rings), where each rank forwards an owner's KV once");
    }
  }
  // Chain ends: a rank that received an owner's K/V and forwarded it to no one returns the dK/dV.
  for (const auto& [key, mi] : kv_in_) {
    const auto [rank, group, owner] = key;
    if (forwarded.contains({rank, group, owner}) || rank == owner) continue;
    const Message& in = prog_.messages[static_cast<std::size_t>(mi)];
    // The return hop takes the route of a forward transfer rank → owner in the group, if the ring has one.
    const plan::Route* route = nullptr;
    if (const auto hop = hop_to.find({rank, group, owner}); hop != hop_to.end()) {
      route = &route_of_send(plan_, prog_.messages[static_cast<std::size_t>(hop->second)]);
    }
    Message ret;
    ret.pass = Pass::bwd;
    ret.purpose = Purpose::dkv;
    ret.src = rank;
    ret.dst = owner;
    ret.group = group;
    ret.step = in.step + 1;
    ret.micro_batch = in.micro_batch;
    ret.kv_owner = owner;
    ret.slices = owner_slices(group, owner, Tensor::dK, Tensor::dV,
                              in.slices.empty() ? plan::HeadRange{} : in.slices.front().heads);
    ret.bytes = in.bytes;
    if (route != nullptr && route->kind == plan::RouteKind::routed) {
      plan::Route scaled = *route;  // the same split, scaled to this message's bytes
      const std::int64_t total = std::max<std::int64_t>(
          1, std::accumulate(scaled.part_bytes.begin(), scaled.part_bytes.end(), std::int64_t{0}));
      std::int64_t given = 0;
      // part · bytes in 128 bits: both reach gigabytes on a routed hop of a long document (a 4 GB hop
      // overflowed int64 into a negative part, and the lowering refused the plan).
      __extension__ using Wide = __int128;
      for (std::size_t p = 0; p < scaled.part_bytes.size(); ++p) {
        scaled.part_bytes[p] =
            p + 1 == scaled.part_bytes.size()
                ? ret.bytes - given
                : static_cast<std::int64_t>(Wide{scaled.part_bytes[p]} * ret.bytes / total);
        given += scaled.part_bytes[p];
      }
      dkv_return_[key] = add_message(ret, scaled);
    } else {
      dkv_return_[key] = add_message(ret, plan::Route{});
    }
    dkv_home_[{owner, group, rank}] = dkv_return_[key];
  }
  // Collectives: the adjoint over the same members; remap messages reversed, carrying gradients.
  const std::size_t forward_collectives = prog_.collectives.size();
  bwd_collective_.assign(forward_collectives, -1);
  regather_.assign(forward_collectives, -1);
  for (std::size_t c = 0; c < forward_collectives; ++c) {
    Collective col = prog_.collectives[c];
    col.kind = adjoint(col.kind);
    col.pass = Pass::bwd;
    col.instrs.assign(col.ranks.size(), -1);
    col.direction = col.direction == plan::RemapDirection::to_linear ? plan::RemapDirection::to_attention
                                                                     : plan::RemapDirection::to_linear;
    col.messages.clear();
    const int id = static_cast<int>(prog_.collectives.size());
    bwd_collective_[c] = id;
    if (is_kv_gather(static_cast<int>(c))) {
      prog_.collectives.push_back(std::move(col));
      regather_[c] = build_kv_gather_backward(static_cast<int>(c), id);
      continue;
    }
    for (const int fm : prog_.collectives[c].messages) {
      Message m = prog_.messages[static_cast<std::size_t>(fm)];
      m.pass = Pass::bwd;
      std::swap(m.src, m.dst);
      std::vector<Slice> gradients = m.slices.copy();
      for (Slice& s : gradients) s.tensor = gradient_of(s.tensor);
      m.slices = SliceList(std::move(gradients));
      m.plan_op = -1;
      m.collective = id;
      col.messages.push_back(static_cast<int>(prog_.messages.size()));
      prog_.messages.push_back(std::move(m));
      routes_.emplace_back();
    }
    prog_.collectives.push_back(std::move(col));
  }
}

Instr Lowerer::backward_attention(int rank, const plan::Op& op, int plan_op) {
  Instr in;
  in.kind = InstrKind::attention;
  in.pass = Pass::bwd;
  in.micro_batch = op.micro_batch;
  in.group = op.group;
  in.step = op.step;
  in.plan_op = plan_op;
  in.name = op.name + " bwd";
  in.seconds = attention_seconds(op, cost_, Pass::bwd);
  in.flops = attention_flops(op, cost_, Pass::bwd);
  in.pairs = op.pairs;
  in.kv_owner = op.zigzag_kv_rank;
  // The same blocks as its forward instruction.
  const Instr& forward = prog_.instr(rank, ids_of(rank, plan_op).front());
  in.heads = forward.heads;
  in.first_block = forward.first_block;
  in.block_count = forward.block_count;
  return in;
}

bool Lowerer::is_local_call(int rank, int op_id) const {
  const auto& ops = plan_.ranks[static_cast<std::size_t>(rank)].ops;
  const Op& op = ops[static_cast<std::size_t>(op_id)];
  if (op.kind != OpKind::attention || op.zigzag_kv_rank >= 0 || op.group < 0 ||
      static_cast<std::size_t>(op.group) >= plan_.groups.size() ||
      plan_.groups[static_cast<std::size_t>(op.group)].ranks.size() != 1)
    return false;
  // It reads only what the rank holds: no K/V a recv or an all-gather brought.
  return std::none_of(op.deps.begin(), op.deps.end(), [&](int d) {
    return ops[static_cast<std::size_t>(d)].kind == OpKind::recv || kv_gather_of(rank, d) >= 0;
  });
}

void Lowerer::lower_backward(int rank) {
  const auto& ops = plan_.ranks[static_cast<std::size_t>(rank)].ops;
  // A call of a local group over what its rank holds that the forward placed inside a ring's span of ops
  // (Zeppelin's engine: between its steps, where the ring waited for K/V) is nested in that ring: its
  // backward runs at the same place in the ring's backward, which waits for K/V too.
  std::map<int, std::pair<int, int>> span;  // group → its first and last op here
  std::vector<int> rings;                   // the groups with transfers here
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    if (op.group < 0) continue;
    auto [it, inserted] = span.try_emplace(op.group, static_cast<int>(i), static_cast<int>(i));
    it->second.second = static_cast<int>(i);
    if ((op.kind == OpKind::send || op.kind == OpKind::recv) && (rings.empty() || rings.back() != op.group))
      rings.push_back(op.group);
  }
  std::sort(rings.begin(), rings.end());
  rings.erase(std::unique(rings.begin(), rings.end()), rings.end());
  std::vector<int> nested_in(ops.size(), -1);  // op → the group whose ring it is nested in
  for (const int group : rings) {
    const auto [first, last] = span.at(group);
    for (int i = first + 1; i < last; ++i) {
      if (ops[static_cast<std::size_t>(i)].group != group && is_local_call(rank, i))
        nested_in[static_cast<std::size_t>(i)] = group;
    }
  }
  // Units: one per CP group, one per other op and per nested call; numbered in order of first appearance.
  std::vector<int> unit_of(ops.size(), -1);
  std::vector<IdList> unit_ops;  // a unit's ops, four in place
  std::map<int, int> unit_of_group;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    const bool ring = (op.kind == OpKind::attention || op.kind == OpKind::send || op.kind == OpKind::recv) &&
                      op.group >= 0 && nested_in[i] < 0;
    int u = -1;
    if (ring) {
      auto [it, inserted] = unit_of_group.try_emplace(op.group, static_cast<int>(unit_ops.size()));
      if (inserted) unit_ops.emplace_back();
      u = it->second;
    } else {
      u = static_cast<int>(unit_ops.size());
      unit_ops.emplace_back();
    }
    unit_of[i] = u;
    unit_ops[static_cast<std::size_t>(u)].push_back(static_cast<int>(i));
  }
  std::vector<IdList> consumers(unit_ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    for (const int d : ops[i].deps) {
      const int from = unit_of[static_cast<std::size_t>(d)], to = unit_of[i];
      if (from != to) consumers[static_cast<std::size_t>(from)].push_back(to);
    }
  }
  std::vector<std::vector<int>> nested(unit_ops.size());  // ring unit → its nested calls' units, in order
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (nested_in[i] >= 0)
      nested[static_cast<std::size_t>(unit_of_group.at(nested_in[i]))].push_back(unit_of[i]);
  }
  std::vector<int> order(unit_ops.size());
  for (std::size_t u = 0; u < order.size(); ++u) order[u] = static_cast<int>(u);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return unit_ops[static_cast<std::size_t>(a)].back() > unit_ops[static_cast<std::size_t>(b)].back();
  });

  std::vector<IdList> done(unit_ops.size());
  std::vector<bool> emitted(unit_ops.size(), false);
  std::vector<int> entry;  // reused across units
  const auto consumers_emitted = [&](int u) {
    const auto& c = consumers[static_cast<std::size_t>(u)];
    return std::all_of(c.begin(), c.end(), [&](int x) { return emitted[static_cast<std::size_t>(x)]; });
  };
  const auto entry_of = [&](int u) {
    entry.clear();
    for (const int c : consumers[static_cast<std::size_t>(u)]) {
      if (!emitted[static_cast<std::size_t>(c)]) {
        fail(rank, unit_ops[static_cast<std::size_t>(u)].front(),
             "its unit's output is consumed by ops that come before it ends (interleaved CP groups), so the "
             "backward "
             "order cannot be derived");
      }
      const auto& d = done[static_cast<std::size_t>(c)];
      entry.insert(entry.end(), d.begin(), d.end());
    }
    std::sort(entry.begin(), entry.end());
    entry.erase(std::unique(entry.begin(), entry.end()), entry.end());
    return IdList(entry);
  };
  // A nested local call's backward: one attention instruction after its consumers' backward.
  const auto emit_nested = [&](int v) {
    const int id = unit_ops[static_cast<std::size_t>(v)].front();
    const Op& op = ops[static_cast<std::size_t>(id)];
    Instr in = backward_attention(rank, op, id);
    in.deps = entry_of(v);
    done[static_cast<std::size_t>(v)] = IdList{emit(rank, std::move(in))};
    emitted[static_cast<std::size_t>(v)] = true;
  };
  for (const int u : order) {
    if (emitted[static_cast<std::size_t>(u)]) continue;  // nested in a ring, emitted with it
    const IdList entry_list = entry_of(u);
    const auto& members = unit_ops[static_cast<std::size_t>(u)];
    const Op& first = ops[static_cast<std::size_t>(members.front())];
    auto& out = done[static_cast<std::size_t>(u)];
    if (first.kind == OpKind::gemm) {
      for (const GemmPart part : {GemmPart::data_grad, GemmPart::weight_grad}) {
        Instr in;
        in.kind = InstrKind::gemm;
        in.pass = Pass::bwd;
        in.micro_batch = first.micro_batch;
        in.plan_op = first.id;
        in.name = first.name + (part == GemmPart::data_grad ? " dgrad" : " wgrad");
        in.deps = entry_list;
        in.gemm_part = part;
        in.seconds = gemm_seconds(first, cost_, part);
        in.flops = gemm_flops(first, cost_, part);
        in.m = first.m;
        in.n = first.n;
        in.k = first.k;
        const int id = emit(rank, std::move(in));
        if (part == GemmPart::data_grad) out.push_back(id);
      }
    } else if (first.kind == OpKind::remap || first.kind == OpKind::collective) {
      const int forward = op_collective_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(first.id)];
      // A member whose attention did not re-gather (it computes nothing of the group) still takes part.
      if (is_kv_gather(forward)) out.push_back(regather_instr(rank, forward, entry_list));
      const int c = bwd_collective_[static_cast<std::size_t>(forward)];
      Collective& col = prog_.collectives[static_cast<std::size_t>(c)];
      Instr in;
      in.kind = InstrKind::collective;
      in.stream = Stream::comm;
      in.pass = Pass::bwd;
      in.micro_batch = first.micro_batch;
      in.plan_op = first.id;
      in.name = first.name + " bwd";
      in.deps = entry_list;
      in.collective = c;
      in.bytes = first.kind == OpKind::remap ? first.bytes_out + first.bytes_in : first.bytes;
      const auto pos =
          static_cast<std::size_t>(std::find(col.ranks.begin(), col.ranks.end(), rank) - col.ranks.begin());
      col.instrs[pos] = emit(rank, std::move(in));
      out.push_back(col.instrs[pos]);
    } else {
      // The nested calls whose consumers are done run where the forward ran them: before the first of the
      // ring's ops that came after them.
      const auto& inner = nested[static_cast<std::size_t>(u)];
      std::size_t next = 0;
      const auto before = [&](int forward_op) {
        for (; next < inner.size(); ++next) {
          const int v = inner[next];
          if (unit_ops[static_cast<std::size_t>(v)].front() > forward_op) break;
          if (!emitted[static_cast<std::size_t>(v)] && consumers_emitted(v)) emit_nested(v);
        }
      };
      lower_ring_backward(rank, members, entry_list, out, before);
      Instr like;  // earlier units wait on the group's whole backward through one instruction
      like.pass = Pass::bwd;
      like.micro_batch = first.micro_batch;
      like.group = first.group;
      like.plan_op = first.id;
      like.name = "group bwd";
      out = joined(rank, std::move(out), std::move(like));
    }
    emitted[static_cast<std::size_t>(u)] = true;
  }
}

void Lowerer::lower_ring_backward(int rank, const IdList& members, const IdList& entry, IdList& done,
                                  const std::function<void(int forward_op)>& before) {
  const auto& ops = plan_.ranks[static_cast<std::size_t>(rank)].ops;
  // Scratch tables by forward op and by owner rank (core/lower/lowerer.hpp), empty between calls: O(1)
  // lookups with no allocation, as this runs once per (rank, CP group).
  std::vector<IdList>& bwd_ids = ring_.bwd_ids;  // forward op → its backward K/V instructions
  if (bwd_ids.size() < ops.size()) bwd_ids.resize(ops.size());
  const auto deps_of = [&](const Op& op) {
    IdList deps = entry;
    for (const int d : op.deps) {
      const IdList& ids = bwd_ids[static_cast<std::size_t>(d)];
      deps.append(ids.begin(), ids.end());
    }
    return deps;
  };
  const auto bwd_kv_into = [&](int group, int owner) {
    const int m = kv_message_into(rank, group, owner);
    return m < 0 ? -1 : bwd_kv_[static_cast<std::size_t>(m)];
  };
  const auto add_done = [&](const IdList& ids) { done.append(ids.begin(), ids.end()); };
  // An owner's row in the tables; a hand-written plan may name a rank outside the world.
  const auto owner_row = [&](int owner, int op_id) {
    if (owner < 0 || owner >= plan_.world_size) {
      fail(rank, op_id,
           "names rank " + std::to_string(owner) + " as the owner of its K/V, which is not in the world of " +
               std::to_string(plan_.world_size));
    }
    return static_cast<std::size_t>(owner);
  };

  // 1. K/V around the ring again, and the attention steps at backward cost, in forward order.
  // owner → the last backward attention step on its K/V (−1: none)
  std::vector<int>& attention_of_owner = ring_.attention_of_owner;
  int group = -1;
  for (const int id : members) {
    const Op& op = ops[static_cast<std::size_t>(id)];
    group = op.group;
    if (op.kind == OpKind::attention && before) before(id);
    const int fm = transfer_message_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(id)];
    if (op.kind == OpKind::recv) {
      IdList& ids = bwd_ids[static_cast<std::size_t>(id)];
      ids = emit_last_legs(bwd_kv_[static_cast<std::size_t>(fm)], deps_of(op), op.name, id);
      add_done(ids);
    } else if (op.kind == OpKind::send) {
      IdList reads;
      if (op.kv_owner >= 0 && op.kv_owner != rank) reads.push_back(bwd_kv_into(op.group, op.kv_owner));
      IdList& ids = bwd_ids[static_cast<std::size_t>(id)];
      ids = emit_first_legs(bwd_kv_[static_cast<std::size_t>(fm)], deps_of(op), op.name, id, reads);
      add_done(ids);
    } else {
      Instr in = backward_attention(rank, op, id);
      in.deps = deps_of(op);
      if (op.zigzag_kv_rank >= 0 && op.zigzag_kv_rank != rank) {
        in.reads.push_back(bwd_kv_into(op.group, op.zigzag_kv_rank));
      } else if (op.zigzag_kv_rank < 0) {
        for (const int d : op.deps) {
          const int m = transfer_message_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(d)];
          if (m >= 0 && ops[static_cast<std::size_t>(d)].kind == OpKind::recv)
            in.reads.push_back(bwd_kv_[static_cast<std::size_t>(m)]);
          // Only the local K/V was kept: the K/V the forward gathered is gathered again first.
          if (const int c = kv_gather_of(rank, d); c >= 0) {
            const int again = regather_instr(rank, c, entry);
            in.deps.push_back(again);
            done.push_back(again);
            for (const int gathered : messages_into(regather_[static_cast<std::size_t>(c)], rank))
              in.reads.push_back(gathered);
          }
        }
      }
      const int aid = emit(rank, std::move(in));
      const int owner = op.zigzag_kv_rank >= 0 ? op.zigzag_kv_rank : rank;
      attention_of_owner[owner_row(owner, id)] = aid;
      ring_.owners.push_back(owner);
      done.push_back(aid);
    }
  }

  if (before) before(INT_MAX);  // what came after the ring's last attention step

  // 2. The dK/dV accumulators, one step behind their K/V.
  std::vector<IdList>& dkv_in = ring_.dkv_in;               // owner → the recvs of its accumulator here
  std::vector<int>& dkv_message_in = ring_.dkv_message_in;  // owner → that accumulator's message, −1
  IdList previous_send;                                     // one accumulator in flight per direction
  const auto accumulator_deps = [&](int owner) {
    IdList deps = entry;
    const std::size_t o = owner_row(owner, -1);
    if (attention_of_owner[o] >= 0) deps.push_back(attention_of_owner[o]);
    deps.append(dkv_in[o].begin(), dkv_in[o].end());
    deps.append(previous_send.begin(), previous_send.end());
    return deps;
  };
  const auto accumulator_reads = [&](int owner) {
    const int m = dkv_message_in[owner_row(owner, -1)];
    return m < 0 ? IdList{} : IdList{m};
  };
  for (const int id : members) {
    const Op& op = ops[static_cast<std::size_t>(id)];
    const int fm = transfer_message_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(id)];
    if (fm < 0 || op.kv_owner < 0) continue;
    const int dm = dkv_[static_cast<std::size_t>(fm)];
    if (op.kind == OpKind::recv) {
      const std::size_t o = owner_row(op.kv_owner, id);
      dkv_in[o] = emit_last_legs(dm, entry, "dkv", id);
      dkv_message_in[o] = dm;
      ring_.owners.push_back(op.kv_owner);
      add_done(dkv_in[o]);
    } else if (op.kind == OpKind::send) {
      owner_row(op.kv_owner, id);  // fails on an owner outside the world
      previous_send =
          emit_first_legs(dm, accumulator_deps(op.kv_owner), "dkv", id, accumulator_reads(op.kv_owner));
      add_done(previous_send);
    }
  }
  // 3. Finished accumulators go home; this rank's own comes back from the end of its chain.
  for (auto it = dkv_return_.lower_bound({rank, group, INT_MIN});
       it != dkv_return_.end() && std::get<0>(it->first) == rank && std::get<1>(it->first) == group; ++it) {
    const int owner = std::get<2>(it->first);
    previous_send = emit_first_legs(it->second, accumulator_deps(owner), "dkv", -1, accumulator_reads(owner));
    add_done(previous_send);
  }
  for (auto it = dkv_home_.lower_bound({rank, group, INT_MIN});
       it != dkv_home_.end() && std::get<0>(it->first) == rank && std::get<1>(it->first) == group; ++it) {
    add_done(emit_last_legs(it->second, entry, "dkv", -1));
  }
  for (const int id : members) bwd_ids[static_cast<std::size_t>(id)].clear();
  for (const int owner : ring_.owners) {
    const auto o = static_cast<std::size_t>(owner);
    attention_of_owner[o] = -1;
    dkv_in[o].clear();
    dkv_message_in[o] = -1;
  }
  ring_.owners.clear();
}

}  // namespace zb::lower::detail
