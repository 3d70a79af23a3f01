#include "core/exec/reference/head_slices.hpp"

#include <algorithm>

namespace zb::reference {

std::optional<HeadColumns> HeadMap::columns(const layout::HeadRange& range) const {
  if (!applies_ || range.all()) return every();
  const auto scaled = [&](int model_head) -> std::optional<int> {
    const std::int64_t n = static_cast<std::int64_t>(model_head) * dims_.heads;
    if (n % model_heads_ != 0) return std::nullopt;
    return static_cast<int>(n / model_heads_);
  };
  const auto begin = scaled(range.begin), end = scaled(range.end);
  if (!begin || !end || *begin >= *end || *end > dims_.heads) return std::nullopt;
  const int group = dims_.heads / dims_.kv_heads;
  HeadColumns c{*begin, *end, *begin / group, (*end + group - 1) / group};
  // The kernel reads packed query head i from packed K/V head i / (q_count / kv_count).
  if (c.q_count() % c.kv_count() != 0) return std::nullopt;
  const int packed_group = c.q_count() / c.kv_count();
  for (int h = c.q_begin; h < c.q_end; ++h)
    if (h / group - c.kv_begin != (h - c.q_begin) / packed_group) return std::nullopt;
  return c;
}

std::string HeadMap::describe(const layout::HeadRange& range) const {
  if (range.all()) return "every head";
  return "model heads [" + std::to_string(range.begin) + ", " + std::to_string(range.end) + ") of " +
         std::to_string(model_heads_);
}

bool kv_wide_tensor(lower::Tensor tensor) {
  using lower::Tensor;
  return tensor == Tensor::K || tensor == Tensor::V || tensor == Tensor::dK || tensor == Tensor::dV;
}

std::pair<std::size_t, std::size_t> column_span(const HeadColumns& cols, lower::Tensor tensor, int head_dim) {
  const auto d = static_cast<std::size_t>(head_dim);
  if (kv_wide_tensor(tensor))
    return {static_cast<std::size_t>(cols.kv_begin) * d, static_cast<std::size_t>(cols.kv_end) * d};
  return {static_cast<std::size_t>(cols.q_begin) * d, static_cast<std::size_t>(cols.q_end) * d};
}

void take_columns(std::span<const float> rows, std::size_t width, std::size_t first, std::size_t last,
                  std::span<float> out) {
  const std::size_t n = last - first, count = width == 0 ? 0 : rows.size() / width;
  for (std::size_t r = 0; r < count; ++r)
    std::copy_n(rows.begin() + static_cast<std::ptrdiff_t>(r * width + first), n,
                out.begin() + static_cast<std::ptrdiff_t>(r * n));
}

void put_columns(RowStore& store, int seq, std::int64_t begin, std::int64_t end, std::size_t first,
                 std::size_t last, std::span<const float> values, bool add) {
  if (end <= begin) return;
  store.allocate(seq, begin, end);  // absent rows start at zero; stored ones keep their values
  const std::span<float> rows = store.rows(seq, begin, end);
  const auto width = static_cast<std::size_t>(store.width());
  const std::size_t n = last - first;
  for (std::size_t r = 0; r < static_cast<std::size_t>(end - begin); ++r) {
    float* row = rows.data() + r * width + first;
    const float* in = values.data() + r * n;
    for (std::size_t i = 0; i < n; ++i) row[i] = add ? row[i] + in[i] : in[i];
  }
  store.mark_present(seq, begin, end);
}

}  // namespace zb::reference
