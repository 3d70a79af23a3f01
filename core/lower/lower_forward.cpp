// The forward pass: each plan op of a rank, in list order, becomes its instructions (one compute
// instruction, the legs of a transfer, or one collective instruction); dependencies on a plan op become
// dependencies on every instruction standing for it. Also lower() itself, and the compute durations.
#include <algorithm>
#include <atomic>
#include <cmath>

#include "core/common/error.hpp"
#include "core/cost/pointwise_cost.hpp"
#include "core/lower/lowerer.hpp"

namespace zb::lower {

double attention_flops(const plan::Op& op, const CostModel& cost, Pass pass) {
  const double all_heads =
      pass == Pass::bwd ? cost.attention_bwd_flops(op.pairs) : cost.attention_fwd_flops(op.pairs);
  return all_heads * op.heads.share(cost.model().heads);
}

double attention_seconds(const plan::Op& op, const CostModel& cost, Pass pass) {
  return cost.attention_time(attention_flops(op, cost, pass), op.q_tokens) +
         (op.calls - 1) * cost.profile().attention_call_overhead;
}

double gemm_seconds(const plan::Op& op, const CostModel& cost, GemmPart part) {
  const auto m = static_cast<double>(op.m), n = static_cast<double>(op.n), k = static_cast<double>(op.k);
  const double t = cost.gemm_time(m, n, k);
  // The layer's memory-bound kernels ride with its GEMMs, each its share (pointwise_share_*,
  // core/cost/pointwise_cost.hpp): forward with the product, backward with the data gradient, which the
  // gradient flow waits on.
  switch (part) {
    case GemmPart::forward:
      return t + pointwise_share_fwd_time(cost, m, n, k);
    case GemmPart::data_grad:
      return t * cost.profile().backward_linear_factor / 2 + pointwise_share_bwd_time(cost, m, n, k);
    case GemmPart::weight_grad:
      break;
  }
  return t * cost.profile().backward_linear_factor / 2;
}

double gemm_flops(const plan::Op& op, const CostModel& cost, GemmPart part) {
  const double product =
      2.0 * static_cast<double>(op.m) * static_cast<double>(op.n) * static_cast<double>(op.k);
  return part == GemmPart::forward ? product : product * cost.profile().backward_linear_factor / 2;
}

double compute_seconds(const plan::Op& op, const CostModel& cost, Pass pass) {
  if (op.kind == plan::OpKind::attention) return attention_seconds(op, cost, pass);
  if (op.kind != plan::OpKind::gemm) return 0;
  if (pass == Pass::fwd) return gemm_seconds(op, cost, GemmPart::forward);
  return gemm_seconds(op, cost, GemmPart::data_grad) + gemm_seconds(op, cost, GemmPart::weight_grad);
}

namespace {
std::atomic<long> lowered_plans{0};  // a statistic, read by lowerings(); never configuration
}  // namespace

Program lower(const plan::Plan& plan, const CostModel& cost, const LowerOptions& options) {
  lowered_plans.fetch_add(1, std::memory_order_relaxed);
  return detail::Lowerer(plan, cost, options).run();
}

long lowerings() {
  return lowered_plans.load(std::memory_order_relaxed);
}

}  // namespace zb::lower

namespace zb::lower::detail {

using plan::Op;
using plan::OpKind;

Program Lowerer::run() {
  pair_transfers();
  build_collectives();
  for (int r = 0; r < plan_.world_size; ++r) lower_forward(r);
  emit_relays(Pass::fwd);
  for (auto& rp : prog_.ranks) rp.first_backward = static_cast<int>(rp.instrs.size());
  if (options_.backward) {
    build_backward_messages();
    for (int r = 0; r < plan_.world_size; ++r) lower_backward(r);
    emit_relays(Pass::bwd);
  }
  assign_matches();
  for (std::size_t c = 0; c < prog_.collectives.size(); ++c) {
    const Collective& col = prog_.collectives[c];
    for (std::size_t i = 0; i < col.ranks.size(); ++i) {
      if (col.instrs[i] < 0)
        fail(col.ranks[i], -1, "collective " + std::to_string(c) + " has no instruction on this member");
    }
  }
  return std::move(prog_);
}

IdList Lowerer::done_of(int rank, const std::vector<int>& plan_deps) const {
  IdList ids;
  for (const int d : plan_deps) {
    const IdList& mine = fwd_ids_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(d)];
    ids.append(mine.begin(), mine.end());
  }
  return ids;
}

int Lowerer::kv_message_into(int rank, int group, int owner) const {
  const auto it = kv_in_.find({rank, group, owner});
  return it == kv_in_.end() ? -1 : it->second;
}

void Lowerer::build_collectives() {
  // Remaps: both ends name a remap by (micro-batch, direction, how many such remaps came before it on
  // their own list), so two remaps of one micro-batch stay two exchanges. Plan collectives: by
  // (kind, tag, ranks).
  std::map<std::tuple<int, int, int>, int> remap_of;
  std::map<std::tuple<int, int, std::vector<int>>, int> collective_of;
  std::map<int, std::vector<int>>
      exchange_ops;  // MoE exchange → each member's op id (ranks order), −1 unseen
  for (int r = 0; r < plan_.world_size; ++r) {
    const auto& ops = plan_.ranks[static_cast<std::size_t>(r)].ops;
    std::map<std::pair<int, int>, int> ordinal;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      int c = -1;
      if (op.kind == OpKind::remap) {
        const int dir = static_cast<int>(op.direction);
        const auto key = std::make_tuple(op.micro_batch, dir, ordinal[{op.micro_batch, dir}]++);
        auto [it, inserted] = remap_of.try_emplace(key, static_cast<int>(prog_.collectives.size()));
        if (inserted) {
          Collective col;
          col.kind = CollectiveKind::all_to_all_v;
          col.micro_batch = op.micro_batch;
          col.direction = op.direction;
          prog_.collectives.push_back(col);
        }
        c = it->second;
      } else if (op.kind == OpKind::collective) {
        if (std::find(op.collective_ranks.begin(), op.collective_ranks.end(), r) ==
            op.collective_ranks.end()) {
          fail(r, static_cast<int>(i), "a collective whose ranks do not include this rank");
        }
        const auto key = std::make_tuple(static_cast<int>(op.collective), op.tag, op.collective_ranks);
        auto [it, inserted] = collective_of.try_emplace(key, static_cast<int>(prog_.collectives.size()));
        if (inserted) {
          Collective col;
          col.kind = op.collective;
          col.micro_batch = op.micro_batch;
          col.ranks = op.collective_ranks;
          col.instrs.assign(col.ranks.size(), -1);
          col.group = op.group;
          col.expert_exchange = op.collective == CollectiveKind::all_to_all_v;
          prog_.collectives.push_back(col);
        }
        c = it->second;
        Collective& col = prog_.collectives[static_cast<std::size_t>(c)];
        col.bytes = std::max(col.bytes, op.bytes);
        if (col.group != op.group) {
          fail(r, static_cast<int>(i),
               "its collective names group " + std::to_string(op.group) +
                   ", but another member's op of "
                   "the same collective names group " +
                   std::to_string(col.group));
        }
      } else {
        continue;
      }
      op_collective_[static_cast<std::size_t>(r)][i] = c;
      Collective& col = prog_.collectives[static_cast<std::size_t>(c)];
      if (col.expert_exchange) {
        std::vector<int>& member_ops = exchange_ops.try_emplace(c, col.ranks.size(), -1).first->second;
        const auto pos = std::find(col.ranks.begin(), col.ranks.end(), r) - col.ranks.begin();
        member_ops[static_cast<std::size_t>(pos)] = static_cast<int>(i);
      } else if (col.kind == CollectiveKind::all_to_all_v) {
        col.ranks.push_back(r);
        col.instrs.push_back(-1);
      }
    }
  }
  // The remap's messages: one per (sender, receiver) pair, the sender's ranges in its op's order.
  for (std::size_t c = 0; c < prog_.collectives.size(); ++c) {
    Collective& col = prog_.collectives[c];
    if (col.kind != CollectiveKind::all_to_all_v) continue;
    if (col.expert_exchange) {
      build_expert_exchange(static_cast<int>(c), exchange_ops.at(static_cast<int>(c)));
      continue;
    }
    const bool to_linear = col.direction == plan::RemapDirection::to_linear;
    std::map<std::pair<int, int>, std::int64_t> expected;  // (from, to) → tokens the receiver expects
    std::vector<const Op*> member_ops;
    for (const int r : col.ranks) {
      const auto& ops = plan_.ranks[static_cast<std::size_t>(r)].ops;
      for (std::size_t i = 0; i < ops.size(); ++i) {
        if (op_collective_[static_cast<std::size_t>(r)][i] == static_cast<int>(c))
          member_ops.push_back(&ops[i]);
      }
    }
    for (std::size_t k = 0; k < col.ranks.size(); ++k) {
      const int r = col.ranks[k];
      const Op& op = *member_ops[k];
      std::map<int, std::vector<plan::Shard>> out;
      std::int64_t out_tokens = 0;
      for (const auto& mv : op.moves) {
        const int from = to_linear ? mv.src : mv.dst, to = to_linear ? mv.dst : mv.src;
        if (from == to) continue;
        if (to == r) expected[{from, to}] += mv.range.size();
        if (from != r) continue;
        out[to].push_back(mv.range);
        out_tokens += mv.range.size();
      }
      for (const auto& [to, ranges] : out) {
        if (std::find(col.ranks.begin(), col.ranks.end(), to) == col.ranks.end()) {
          fail(r, op.id,
               "the remap sends rows to rank " + std::to_string(to) +
                   ", which has no remap op of micro-batch " + std::to_string(op.micro_batch) +
                   " in this direction");
        }
        Message m;
        m.pass = Pass::fwd;
        m.purpose = Purpose::remap;
        m.src = r;
        m.dst = to;
        m.micro_batch = op.micro_batch;
        std::int64_t tokens = 0;
        if (options_.rows) {
          std::vector<Slice> slices;
          for (const Tensor t : to_linear ? std::vector<Tensor>{Tensor::O}
                                          : std::vector<Tensor>{Tensor::Q, Tensor::K, Tensor::V}) {
            for (const auto& s : ranges) slices.push_back({t, s.seq, s.begin, s.end, {}});
          }
          m.slices = SliceList(std::move(slices));
        }
        for (const auto& s : ranges) tokens += s.size();
        m.bytes = std::llround(static_cast<double>(op.bytes_out) * static_cast<double>(tokens) /
                               static_cast<double>(out_tokens));
        m.plan_op = op.id;
        m.collective = static_cast<int>(c);
        expected[{r, to}] -= tokens;
        col.messages.push_back(static_cast<int>(prog_.messages.size()));
        prog_.messages.push_back(std::move(m));
        routes_.emplace_back();  // remap messages travel inside their collective, without legs
      }
    }
    for (const auto& [pair, left] : expected) {
      if (left != 0) {
        fail(pair.second, -1,
             "its remap of micro-batch " + std::to_string(col.micro_batch) + " expects " +
                 std::to_string(left > 0 ? left : -left) + (left > 0 ? " more" : " fewer") +
                 " rows from rank " + std::to_string(pair.first) + " than that rank's remap sends");
      }
    }
  }
  build_kv_gathers();
  build_head_all_to_alls();
}

void Lowerer::build_expert_exchange(int c, const std::vector<int>& member_ops) {
  // One message per (sender, receiver) pair with bytes to move, the sender's peer_bytes; a rank keeps the
  // rows routed to its own experts. A member without an op is reported where every collective's are.
  Collective& col = prog_.collectives[static_cast<std::size_t>(c)];
  for (std::size_t k = 0; k < col.ranks.size(); ++k) {
    const int r = col.ranks[k];
    if (member_ops[k] < 0) continue;
    const Op& op = plan_.ranks[static_cast<std::size_t>(r)].ops[static_cast<std::size_t>(member_ops[k])];
    if (op.peer_bytes.size() != col.ranks.size()) {
      fail(r, member_ops[k],
           "its all_to_all_v lists " + std::to_string(op.peer_bytes.size()) + " parts (peer_bytes) for " +
               std::to_string(col.ranks.size()) + " members");
    }
    for (std::size_t j = 0; j < op.peer_bytes.size(); ++j) {
      if (op.peer_bytes[j] <= 0 || col.ranks[j] == r) continue;
      Message m;
      m.pass = Pass::fwd;
      m.purpose = Purpose::expert;
      m.src = r;
      m.dst = col.ranks[j];
      m.micro_batch = op.micro_batch;
      m.bytes = op.peer_bytes[j];
      m.rows = std::llround(static_cast<double>(m.bytes) / cost_.hidden_bytes(1.0));
      m.plan_op = op.id;
      m.collective = c;
      col.messages.push_back(static_cast<int>(prog_.messages.size()));
      prog_.messages.push_back(std::move(m));
      routes_.emplace_back();  // inside its collective, without legs
    }
  }
}

void Lowerer::lower_forward(int rank) {
  const auto& ops = plan_.ranks[static_cast<std::size_t>(rank)].ops;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    const int op_id = static_cast<int>(i);
    IdList deps = done_of(rank, op.deps);
    IdList& ids = ids_of(rank, op_id);
    switch (op.kind) {
      case OpKind::attention: {
        Instr in;
        in.kind = InstrKind::attention;
        in.micro_batch = op.micro_batch;
        in.group = op.group;
        in.step = op.step;
        in.plan_op = op_id;
        in.name = op.name;
        in.deps = std::move(deps);
        in.seconds = attention_seconds(op, cost_, Pass::fwd);
        in.flops = attention_flops(op, cost_, Pass::fwd);
        in.pairs = op.pairs;
        in.kv_owner = op.zigzag_kv_rank;
        in.heads = op.heads;
        if (op.zigzag_kv_rank < 0) {
          in.first_block = static_cast<int>(prog_.blocks.size());
          in.block_count = static_cast<int>(op.blocks.size());
          prog_.blocks.insert(prog_.blocks.end(), op.blocks.begin(), op.blocks.end());
        }
        if (op.zigzag_kv_rank >= 0 && op.zigzag_kv_rank != rank) {
          const int m = kv_message_into(rank, op.group, op.zigzag_kv_rank);
          if (m < 0) {
            fail(rank, op_id,
                 "computes with the KV of rank " + std::to_string(op.zigzag_kv_rank) + " in group " +
                     std::to_string(op.group) + ", but no recv of this rank brings it");
          }
          in.reads.push_back(m);
        } else if (op.zigzag_kv_rank < 0) {
          // Explicit blocks read what the recvs they wait for brought, and what the K/V all-gathers they
          // wait for gathered.
          for (const int d : op.deps) {
            const int m = transfer_message_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(d)];
            if (m >= 0 && ops[static_cast<std::size_t>(d)].kind == OpKind::recv) in.reads.push_back(m);
            if (const int c = kv_gather_of(rank, d); c >= 0) {
              for (const int gathered : messages_into(c, rank)) in.reads.push_back(gathered);
            }
          }
        }
        ids.push_back(emit(rank, std::move(in)));
        break;
      }
      case OpKind::gemm: {
        Instr in;
        in.kind = InstrKind::gemm;
        in.micro_batch = op.micro_batch;
        in.plan_op = op_id;
        in.name = op.name;
        in.deps = std::move(deps);
        in.seconds = gemm_seconds(op, cost_, GemmPart::forward);
        in.flops = gemm_flops(op, cost_, GemmPart::forward);
        in.m = op.m;
        in.n = op.n;
        in.k = op.k;
        ids.push_back(emit(rank, std::move(in)));
        break;
      }
      case OpKind::send: {
        const int m = transfer_message_[static_cast<std::size_t>(rank)][i];
        IdList reads;
        if (op.kv_owner >= 0 && op.kv_owner != rank) {
          const int held = kv_message_into(rank, op.group, op.kv_owner);
          if (held < 0) {
            fail(rank, op_id,
                 "forwards the KV of rank " + std::to_string(op.kv_owner) + " in group " +
                     std::to_string(op.group) + ", which no recv of this rank brings");
          }
          reads.push_back(held);
        }
        ids = emit_first_legs(m, deps, op.name, op_id, reads);
        break;
      }
      case OpKind::recv:
        ids = emit_last_legs(transfer_message_[static_cast<std::size_t>(rank)][i], deps, op.name, op_id);
        break;
      case OpKind::remap:
      case OpKind::collective: {
        const int c = op_collective_[static_cast<std::size_t>(rank)][i];
        Collective& col = prog_.collectives[static_cast<std::size_t>(c)];
        Instr in;
        in.kind = InstrKind::collective;
        in.stream = Stream::comm;
        in.micro_batch = op.micro_batch;
        in.plan_op = op_id;
        in.name = op.name;
        in.deps = std::move(deps);
        in.collective = c;
        in.bytes = op.kind == OpKind::remap ? op.bytes_out + op.bytes_in : op.bytes;
        const auto pos =
            static_cast<std::size_t>(std::find(col.ranks.begin(), col.ranks.end(), rank) - col.ranks.begin());
        if (col.instrs[pos] >= 0) fail(rank, op_id, "a second op of the same collective on this rank");
        col.instrs[pos] = emit(rank, std::move(in));
        ids.push_back(col.instrs[pos]);
        break;
      }
    }
  }
}

}  // namespace zb::lower::detail
