#include "core/exec/reference/rank_state.hpp"

#include <algorithm>
#include <limits>

namespace zb::reference {

RankState::RankState(const RunInputs& inputs, int rank_id)
    : in(inputs),
      rank(rank_id),
      dims{inputs.options.heads, inputs.options.kv_heads, inputs.options.head_dim},
      q(dims.q_width()),
      kv(2 * dims.kv_width()),
      out(dims.q_width()),
      lse(dims.heads) {
  // The rank starts the layer with the rows of its linear layout: what the QKV projection would have
  // produced there. Attention-layout rows elsewhere arrive only through the to_attention remap.
  const QkvGenerator& gen = in.generator;
  const auto kv_width = static_cast<std::size_t>(dims.kv_width());
  for (const plan::Shard& shard : in.plan.linear_layout.at(static_cast<std::size_t>(rank)).shards) {
    const std::int64_t rows = shard.size();
    if (rows <= 0) continue;
    q.allocate(shard.seq, shard.begin, shard.end);
    kv.allocate(shard.seq, shard.begin, shard.end);
    gen.fill(QkvTensor::q, shard.seq, shard.begin, shard.end, q.rows(shard.seq, shard.begin, shard.end));
    q.mark_present(shard.seq, shard.begin, shard.end);
    std::vector<float> k(static_cast<std::size_t>(rows) * kv_width), v(k.size());
    gen.fill(QkvTensor::k, shard.seq, shard.begin, shard.end, k);
    gen.fill(QkvTensor::v, shard.seq, shard.begin, shard.end, v);
    std::span<float> dst = kv.rows(shard.seq, shard.begin, shard.end);
    for (std::size_t r = 0; r < static_cast<std::size_t>(rows); ++r) {
      std::copy_n(k.begin() + static_cast<std::ptrdiff_t>(r * kv_width), kv_width, dst.begin() + static_cast<std::ptrdiff_t>(2 * r * kv_width));
      std::copy_n(v.begin() + static_cast<std::ptrdiff_t>(r * kv_width), kv_width,
                  dst.begin() + static_cast<std::ptrdiff_t>((2 * r + 1) * kv_width));
    }
    kv.mark_present(shard.seq, shard.begin, shard.end);
  }

  // Which recv ops each op may read from: the plan promises data only through dependencies, so an op
  // sees exactly the parcels of the recvs it depends on (a missing dep is then a missing-data error,
  // not a race that happens to work).
  const auto& ops = in.plan.ranks.at(static_cast<std::size_t>(rank)).ops;
  sources.resize(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    std::vector<int>& mine = sources[i];
    for (const int d : ops[i].deps) {
      if (d < 0 || static_cast<std::size_t>(d) >= i) continue;  // plan::verify rejects these; the loop reports them
      const auto& theirs = sources[static_cast<std::size_t>(d)];
      mine.insert(mine.end(), theirs.begin(), theirs.end());
      if (ops[static_cast<std::size_t>(d)].kind == plan::OpKind::recv) mine.push_back(d);
    }
    std::sort(mine.begin(), mine.end());
    mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
  }
}

std::string RankState::where(const plan::Op& op) const {
  std::string text = "op " + std::to_string(op.id) + " (" + plan::to_string(op.kind);
  if (op.group >= 0) text += ", group " + std::to_string(op.group);
  if (op.step >= 0) text += ", step " + std::to_string(op.step);
  if (op.kind == plan::OpKind::send || op.kind == plan::OpKind::recv)
    text += ", tag " + std::to_string(op.tag) + (op.kind == plan::OpKind::send ? " to rank " : " from rank ") +
            std::to_string(op.peer);
  return text + ")";
}

void RankState::record(const plan::Op& op, Stream stream, EventCategory category, double start, double bytes,
                       double flops) {
  TraceEvent e;
  e.rank = rank;
  e.stream = stream;
  e.name = op.name.empty() ? plan::to_string(op.kind) : op.name;
  e.category = category;
  e.pass = Pass::fwd;
  e.micro_batch = op.micro_batch;
  e.start = start;
  e.end = std::max(start, seconds_since_start());
  e.bytes = bytes;
  e.flops = flops;
  e.op = op.id;
  e.peer = op.peer;
  e.group = op.group;
  e.step = op.step;
  events.push_back(std::move(e));
}

std::optional<std::int64_t> gather_kv(const RankState& state, const std::vector<int>& recv_ops, int seq,
                                      std::int64_t begin, std::int64_t end, std::span<float> out) {
  const auto width = static_cast<std::size_t>(state.kv.width());
  std::int64_t t = begin;
  while (t < end) {
    std::int64_t run = state.kv.present_run(seq, t, end);
    const RowStore* from = &state.kv;
    for (std::size_t i = 0; run == 0 && i < recv_ops.size(); ++i) {
      const auto it = state.parcels.find(recv_ops[i]);
      if (it == state.parcels.end()) continue;
      run = it->second.present_run(seq, t, end);
      from = &it->second;
    }
    if (run == 0) return t;
    const auto rows = from->rows(seq, t, t + run);
    std::copy(rows.begin(), rows.end(), out.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(t - begin) * width));
    t += run;
  }
  return std::nullopt;
}

}  // namespace zb::reference
