#include "core/lower/program.hpp"

#include <algorithm>

#include "core/plan/plan.hpp"

namespace zb {

const char* to_string(Pass p) {
  return p == Pass::fwd ? "fwd" : "bwd";
}

}  // namespace zb

namespace zb::lower {

std::size_t Program::instruction_count() const {
  std::size_t n = 0;
  for (const auto& r : ranks) n += r.instrs.size();
  return n;
}

bool is_compute(const Instr& instr) {
  return instr.kind == InstrKind::attention || instr.kind == InstrKind::gemm;
}

std::vector<layout::AttentionBlock> attention_blocks(const Program& program, int rank, const Instr& instr) {
  if (instr.kv_owner < 0) {
    const auto first = program.blocks.begin() + std::max(0, instr.first_block);
    return {first, first + (instr.first_block < 0 ? 0 : instr.block_count)};
  }
  if (instr.group < 0 || static_cast<std::size_t>(instr.group) >= program.groups.size()) return {};
  const Group& g = program.groups[static_cast<std::size_t>(instr.group)];
  const auto position = [&g](int r) {
    const auto it = std::find(g.ranks.begin(), g.ranks.end(), r);
    return it == g.ranks.end() ? -1 : static_cast<int>(it - g.ranks.begin());
  };
  const int q_pos = position(rank), kv_pos = position(instr.kv_owner);
  std::vector<layout::AttentionBlock> out;
  if (q_pos < 0 || kv_pos < 0) return out;
  for (const int seq : g.sequences) {
    const std::vector<layout::AttentionBlock> blocks =
        plan::zigzag_blocks(seq, program.sequences.at(static_cast<std::size_t>(seq)).length,
                            static_cast<int>(g.ranks.size()), q_pos, kv_pos);
    out.insert(out.end(), blocks.begin(), blocks.end());
  }
  return out;
}

const char* to_string(InstrKind k) {
  switch (k) {
    case InstrKind::attention:
      return "attention";
    case InstrKind::gemm:
      return "gemm";
    case InstrKind::send:
      return "send";
    case InstrKind::recv:
      return "recv";
    case InstrKind::collective:
      return "collective";
    case InstrKind::wait:
      return "wait";
  }
  return "?";
}

const char* to_string(Stream s) {
  switch (s) {
    case Stream::compute:
      return "compute";
    case Stream::comm:
      return "comm";
    case Stream::relay:
      return "relay";
  }
  return "?";
}

const char* to_string(Tensor t) {
  static const char* const names[] = {"Q", "K", "V", "O", "dQ", "dK", "dV", "dO", "hidden", "grad"};
  return names[static_cast<int>(t)];
}

const char* to_string(Purpose p) {
  switch (p) {
    case Purpose::kv:
      return "kv";
    case Purpose::dkv:
      return "dkv";
    case Purpose::remap:
      return "remap";
    case Purpose::expert:
      return "expert";
  }
  return "?";
}

const char* to_string(LegRole r) {
  switch (r) {
    case LegRole::direct:
      return "direct";
    case LegRole::dispatch:
      return "dispatch";
    case LegRole::nic:
      return "nic";
    case LegRole::combine:
      return "combine";
  }
  return "?";
}

std::string describe(const Program& program, int rank, int id) {
  std::string text = "rank " + std::to_string(rank) + " instr " + std::to_string(id);
  if (rank < 0 || rank >= program.world_size) return text;
  const auto& list = program.ranks[static_cast<std::size_t>(rank)].instrs;
  if (id < 0 || static_cast<std::size_t>(id) >= list.size()) return text;
  const Instr& in = list[static_cast<std::size_t>(id)];
  text += std::string(" (") + to_string(in.kind) + " " + in.name;
  if (in.kind == InstrKind::send) text += " → " + std::to_string(in.peer);
  if (in.kind == InstrKind::recv) text += " ← " + std::to_string(in.peer);
  if (in.group >= 0) text += ", group " + std::to_string(in.group);
  if (in.step >= 0) text += " step " + std::to_string(in.step);
  text += std::string(", ") + to_string(in.pass);
  if (in.plan_op >= 0) text += ", plan op " + std::to_string(in.plan_op);
  return text + ")";
}

}  // namespace zb::lower
