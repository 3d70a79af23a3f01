#pragma once
// Head slices on real rows. The Program's head ranges (an attention op's, a head all-to-all message's
// slices) count the model's query heads; the reference computes its own, usually fewer, heads
// (ReferenceOptions). HeadMap turns a model head range into the reference heads and the K/V heads they
// read (GQA: query head h reads kv head h / (heads / kv_heads)), and the column helpers read and write
// just those heads of a row, so a rank that holds some heads of a token (after a head all-to-all) never
// touches the others.
//
// Head ranges apply only without tensor parallelism: there every rank of a TP group runs its group's
// ops on every head of its own dims, as before (the reference does not split heads for TP).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/common/token_layout.hpp"
#include "core/exec/reference/qkv_generator.hpp"
#include "core/exec/reference/row_store.hpp"
#include "core/lower/program.hpp"

namespace zb::reference {

// Reference heads [q_begin, q_end) and the K/V heads [kv_begin, kv_end) they read.
struct HeadColumns {
  int q_begin = 0, q_end = 0, kv_begin = 0, kv_end = 0;
  [[nodiscard]] int q_count() const { return q_end - q_begin; }
  [[nodiscard]] int kv_count() const { return kv_end - kv_begin; }
};

class HeadMap {
 public:
  HeadMap() = default;  // applies to nothing: every range is every head
  HeadMap(int model_heads, const AttentionDims& dims, bool applies)
      : model_heads_(model_heads), dims_(dims), applies_(applies && model_heads > 0) {}

  [[nodiscard]] bool applies() const { return applies_; }
  [[nodiscard]] const AttentionDims& dims() const { return dims_; }
  [[nodiscard]] HeadColumns every() const { return {0, dims_.heads, 0, dims_.kv_heads}; }
  // The reference heads of a model head range; nullopt when its ends fall inside a reference head, or
  // when its query heads do not read their K/V heads in the kernel's packed GQA order (a slice that
  // starts or ends inside a K/V group it shares with another slice).
  [[nodiscard]] std::optional<HeadColumns> columns(const layout::HeadRange& range) const;
  // "model heads [8, 16) of 32": how errors name a range.
  [[nodiscard]] std::string describe(const layout::HeadRange& range) const;

 private:
  int model_heads_ = 0;
  AttentionDims dims_;
  bool applies_ = false;
};

// Whether `tensor`'s rows are K/V-wide (K, V, dK, dV): their columns are K/V heads.
[[nodiscard]] bool kv_wide_tensor(lower::Tensor tensor);
// The first and last column (floats) of `cols` in a row of `tensor`.
[[nodiscard]] std::pair<std::size_t, std::size_t> column_span(const HeadColumns& cols, lower::Tensor tensor,
                                                              int head_dim);

// Copies columns [first, last) of rows (row-major, `width` floats each) into `out` (rows × (last − first)).
void take_columns(std::span<const float> rows, std::size_t width, std::size_t first, std::size_t last,
                  std::span<float> out);
// Writes (add = false) or adds `values` (rows × (last − first)) into columns [first, last) of rows
// [begin, end) of `seq` in `store`, allocating absent rows (zeros) and marking them present. The other
// columns keep what they held.
void put_columns(RowStore& store, int seq, std::int64_t begin, std::int64_t end, std::size_t first,
                 std::size_t last, std::span<const float> values, bool add);

}  // namespace zb::reference
