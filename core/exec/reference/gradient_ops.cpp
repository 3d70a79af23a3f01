#include "core/exec/reference/gradient_ops.hpp"

#include <cstring>

namespace zb::reference {
namespace {

bool is_kv_gradient(lower::Tensor t) {
  return t == lower::Tensor::dK || t == lower::Tensor::dV;
}

}  // namespace

std::int64_t add_present(const RowStore& from, int seq, std::int64_t begin, std::int64_t end,
                         std::span<float> rows) {
  const auto width = static_cast<std::size_t>(from.width());
  std::int64_t added = 0;
  for (std::int64_t t = begin; t < end;) {
    const std::int64_t run = from.present_run(seq, t, end);
    if (run == 0) {
      ++t;
      continue;
    }
    const auto values = from.rows(seq, t, t + run);
    float* out = rows.data() + static_cast<std::size_t>(t - begin) * width;
    for (std::size_t i = 0; i < values.size(); ++i) out[i] += values[i];
    added += run;
    t += run;
  }
  return added;
}

void add_rows(RowStore& into, int seq, std::int64_t begin, std::int64_t end, std::span<const float> values) {
  if (end <= begin) return;
  into.allocate(seq, begin, end);  // absent rows start at zero; stored ones keep their values
  const auto rows = into.rows(seq, begin, end);
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] += values[i];
  into.mark_present(seq, begin, end);
}

void seed_output_gradients(RankState& state) {
  RowStore& d_o = state.own.of(lower::Tensor::dO);
  for (const layout::Shard& shard : state.in.program.linear_layout.at(static_cast<std::size_t>(state.rank))) {
    if (shard.size() <= 0) continue;
    d_o.allocate(shard.seq, shard.begin, shard.end);
    state.in.generator.fill(QkvTensor::d_o, shard.seq, shard.begin, shard.end,
                            d_o.rows(shard.seq, shard.begin, shard.end));
    d_o.mark_present(shard.seq, shard.begin, shard.end);
  }
}

std::string pack_accumulator(RankState& state, int id, Bytes& out) {
  const lower::Instr& in = state.instr(id);
  const lower::Message& m = state.message(in.message);
  const std::vector<const TensorRows*> sources = state.sources(id);  // own rows first, then what it reads
  std::vector<std::int64_t> taken(sources.size() * 2, 0);            // [source][dK, dV] rows taken
  std::vector<float> rows;
  for (const lower::Slice& s : m.slices) {
    if (!is_kv_gradient(s.tensor))
      return "accumulator message " + std::to_string(in.message) + " lists " + slice_text(s) +
             "; it carries dK and dV only";
    if (s.rows() <= 0) continue;
    const std::size_t t = s.tensor == lower::Tensor::dK ? 0 : 1;
    rows.assign(
        static_cast<std::size_t>(s.rows()) * static_cast<std::size_t>(row_width(state.dims, s.tensor)), 0.0F);
    for (std::size_t src = 1; src < sources.size(); ++src)  // what came before, then this rank's partial
      taken[src * 2 + t] += add_present(sources[src]->of(s.tensor), s.seq, s.begin, s.end, rows);
    RowStore& partial = state.own.of(s.tensor);
    (void)add_present(partial, s.seq, s.begin, s.end, rows);
    partial.erase(s.seq, s.begin, s.end);  // the partial travels on: it must not be counted here too
    const auto at = out.size();
    out.resize(at + rows.size() * sizeof(float));
    std::memcpy(out.data() + at, rows.data(), rows.size() * sizeof(float));
  }
  const lower::Instr& instr = state.instr(id);
  for (std::size_t src = 1; src < sources.size(); ++src) {
    for (const lower::Tensor tensor : {lower::Tensor::dK, lower::Tensor::dV}) {
      const std::int64_t held = sources[src]->of(tensor).stored_rows();
      const std::int64_t carried = taken[src * 2 + (tensor == lower::Tensor::dK ? 0 : 1)];
      if (carried < held) {
        return "accumulator message " + std::to_string(instr.reads[src - 1]) + " that it forwards holds " +
               std::to_string(held) + " rows of " + lower::to_string(tensor) + ", but message " +
               std::to_string(in.message) + " carries only " + std::to_string(carried) +
               " of them on (its slices name other rows): those partial gradients would be lost";
      }
    }
  }
  return {};
}

void accumulate_delivery(RankState& state, const TensorRows& rows, const lower::Message& message) {
  std::vector<float> values;
  for (const lower::Slice& s : message.slices) {
    if (s.rows() <= 0 || !is_kv_gradient(s.tensor)) continue;
    values.assign(
        static_cast<std::size_t>(s.rows()) * static_cast<std::size_t>(row_width(state.dims, s.tensor)), 0.0F);
    (void)add_present(rows.of(s.tensor), s.seq, s.begin, s.end, values);
    add_rows(state.own.of(s.tensor), s.seq, s.begin, s.end, values);
  }
}

}  // namespace zb::reference
