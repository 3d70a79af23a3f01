#include "core/lower/resize.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>
#include <vector>

#include "core/lower/lower.hpp"

namespace zb::lower {
namespace {

// The plan op instruction `in` of `rank` lowers, or null when it names none the plan has.
const plan::Op* op_of(const plan::Plan& plan, int rank, const Instr& in) {
  if (in.plan_op < 0 || rank < 0 || rank >= static_cast<int>(plan.ranks.size())) return nullptr;
  const auto& ops = plan.ranks[static_cast<std::size_t>(rank)].ops;
  if (in.plan_op >= static_cast<int>(ops.size())) return nullptr;
  return &ops[static_cast<std::size_t>(in.plan_op)];
}

// GEMM instructions from their ops; a collective instruction carries its op's bytes (a remap's out and in).
void resize_instrs(Program& program, const plan::Plan& plan, const CostModel& cost) {
  for (RankProgram& r : program.ranks) {
    for (Instr& in : r.instrs) {
      if (in.kind == InstrKind::collective) {
        if (const plan::Op* op = op_of(plan, r.rank, in))
          in.bytes = op->kind == plan::OpKind::remap ? op->bytes_out + op->bytes_in : op->bytes;
        continue;
      }
      if (in.kind != InstrKind::gemm) continue;
      const plan::Op* op = op_of(plan, r.rank, in);
      if (op == nullptr || op->kind != plan::OpKind::gemm) continue;
      in.m = op->m;
      in.n = op->n;
      in.k = op->k;
      in.seconds = gemm_seconds(*op, cost, in.gemm_part);
      in.flops = gemm_flops(*op, cost, in.gemm_part);
    }
  }
}

// The plan op of member k of collective `col`, or null.
const plan::Op* member_op(const Program& program, const plan::Plan& plan, const Collective& col,
                          std::size_t k) {
  if (k >= col.instrs.size() || col.instrs[k] < 0) return nullptr;
  return op_of(plan, col.ranks[k], program.instr(col.ranks[k], col.instrs[k]));
}

void resize_opaque_collectives(Program& program, const plan::Plan& plan) {
  for (Collective& col : program.collectives) {
    if (!col.messages.empty() || col.group >= 0 || col.kind == CollectiveKind::all_to_all_v) continue;
    std::int64_t bytes = 0;
    bool every_member = true;
    for (std::size_t k = 0; k < col.ranks.size(); ++k) {
      const plan::Op* op = member_op(program, plan, col, k);
      if (op == nullptr || op->kind != plan::OpKind::collective) {
        every_member = false;
        break;
      }
      bytes = std::max(bytes, op->bytes);
    }
    if (every_member) col.bytes = bytes;
  }
}

// The new bytes of every MoE exchange message, or false when a message's part is now empty or a part with
// bytes has no message.
bool exchange_bytes(const Program& program, const plan::Plan& plan, std::vector<std::int64_t>& bytes) {
  bytes.assign(program.messages.size(), -1);
  // Forward exchanges: each message is its sender op's part for its receiver.
  std::map<std::pair<int, int>, std::size_t> forward_of;  // (member 0, its plan op) → forward collective
  for (std::size_t c = 0; c < program.collectives.size(); ++c) {
    const Collective& col = program.collectives[c];
    if (!col.expert_exchange || col.pass != Pass::fwd) continue;
    if (!col.instrs.empty() && col.instrs.front() >= 0)
      forward_of[{col.ranks.front(), program.instr(col.ranks.front(), col.instrs.front()).plan_op}] = c;
    std::size_t parts = 0;
    for (std::size_t k = 0; k < col.ranks.size(); ++k) {
      const plan::Op* op = member_op(program, plan, col, k);
      if (op == nullptr) continue;
      for (std::size_t j = 0; j < op->peer_bytes.size(); ++j)
        if (op->peer_bytes[j] > 0 && j < op->collective_ranks.size() &&
            op->collective_ranks[j] != col.ranks[k])
          ++parts;
    }
    if (parts != col.messages.size()) return false;
    for (const int m : col.messages) {
      const Message& msg = program.messages[static_cast<std::size_t>(m)];
      const auto& ops = plan.ranks[static_cast<std::size_t>(msg.src)].ops;
      if (msg.plan_op < 0 || msg.plan_op >= static_cast<int>(ops.size())) return false;
      const plan::Op& op = ops[static_cast<std::size_t>(msg.plan_op)];
      const auto at = std::find(op.collective_ranks.begin(), op.collective_ranks.end(), msg.dst);
      const auto j = static_cast<std::size_t>(at - op.collective_ranks.begin());
      if (at == op.collective_ranks.end() || j >= op.peer_bytes.size() || op.peer_bytes[j] <= 0) return false;
      bytes[static_cast<std::size_t>(m)] = op.peer_bytes[j];
    }
  }
  // Backward exchanges: the lowering reverses the forward one's messages in order, the same bytes.
  for (const Collective& col : program.collectives) {
    if (!col.expert_exchange || col.pass != Pass::bwd) continue;
    if (col.instrs.empty() || col.instrs.front() < 0) return false;
    const auto forward =
        forward_of.find({col.ranks.front(), program.instr(col.ranks.front(), col.instrs.front()).plan_op});
    if (forward == forward_of.end()) return false;
    const Collective& fwd = program.collectives[forward->second];
    if (fwd.messages.size() != col.messages.size()) return false;
    for (std::size_t i = 0; i < col.messages.size(); ++i)
      bytes[static_cast<std::size_t>(col.messages[i])] = bytes[static_cast<std::size_t>(fwd.messages[i])];
  }
  return true;
}

}  // namespace

bool resize(Program& program, const plan::Plan& plan, const CostModel& cost) {
  if (program.world_size != plan.world_size || static_cast<int>(plan.ranks.size()) != plan.world_size)
    return false;
  std::vector<std::int64_t> bytes;
  if (!exchange_bytes(program, plan, bytes)) return false;
  const double row = cost.hidden_bytes(1.0);
  for (std::size_t m = 0; m < program.messages.size(); ++m) {
    if (bytes[m] < 0) continue;
    Message& msg = program.messages[m];
    msg.bytes = bytes[m];
    msg.rows = std::llround(static_cast<double>(msg.bytes) / row);
  }
  // An exchange collective weighs its largest member's op, as the lowering takes it; its adjoint the same.
  for (Collective& col : program.collectives) {
    if (!col.expert_exchange) continue;
    col.bytes = 0;
    for (std::size_t k = 0; k < col.ranks.size(); ++k)
      if (const plan::Op* op = member_op(program, plan, col, k)) col.bytes = std::max(col.bytes, op->bytes);
  }
  resize_instrs(program, plan, cost);
  resize_opaque_collectives(program, plan);
  return true;
}

}  // namespace zb::lower
