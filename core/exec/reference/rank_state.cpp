#include "core/exec/reference/rank_state.hpp"

#include <algorithm>

#include "core/exec/instr_events.hpp"
#include "core/exec/reference/rank_location.hpp"

namespace zb::reference {

RankState::RankState(const RunInputs& inputs, int rank_id)
    : in(inputs),
      rank(rank_id),
      dims{inputs.options.heads, inputs.options.kv_heads, inputs.options.head_dim},
      own(dims),
      lse(dims.heads) {
  // The rank starts the layer with the rows of its linear layout: what the QKV projection would have
  // produced there. Attention-layout rows elsewhere arrive only through the to_attention remap.
  const QkvGenerator& gen = in.generator;
  for (const layout::Shard& shard : in.program.linear_layout.at(static_cast<std::size_t>(rank))) {
    if (shard.size() <= 0) continue;
    for (const auto& [tensor, which] :
         {std::pair{lower::Tensor::Q, QkvTensor::q}, std::pair{lower::Tensor::K, QkvTensor::k},
          std::pair{lower::Tensor::V, QkvTensor::v}}) {
      RowStore& store = own.of(tensor);
      store.allocate(shard.seq, shard.begin, shard.end);
      gen.fill(which, shard.seq, shard.begin, shard.end, store.rows(shard.seq, shard.begin, shard.end));
      store.mark_present(shard.seq, shard.begin, shard.end);
    }
  }
}

std::vector<const TensorRows*> RankState::sources(int id) const {
  std::vector<const TensorRows*> from{&own};
  for (const int m : instr(id).reads) {
    const auto it = buffers.find(m);
    if (it == buffers.end() || !it->second.complete) {
      throw Error(ExitCode::runtime, rank_location(rank),
                  where(id) + ": reads message " + std::to_string(m) +
                      ", whose buffer is not complete (or already freed)");
    }
    from.push_back(&it->second.rows);
  }
  return from;
}

void RankState::record(int id, Track track, EventCategory category, double start, double bytes, double flops,
                       int peer) {
  const lower::Instr& instr = this->instr(id);
  TraceEvent e = event_of(rank, instr, track, category);
  if (e.name.empty()) e.name = lower::to_string(instr.kind);
  e.start = start;
  e.end = std::max(start, seconds_since_start());
  e.bytes = bytes;
  e.flops = flops;
  e.peer = peer;
  events.push_back(std::move(e));
}

}  // namespace zb::reference
