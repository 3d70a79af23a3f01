// Argument checks shared by the CPU and CUDA backends, so both reject the same inputs with the same
// messages. Every message names the entry point and the offending argument with its value.
#include <algorithm>
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "kernels/attention.hpp"
#include "kernels/attention_backward.hpp"
#include "kernels/pack.hpp"

namespace zb::kernels {
namespace {

std::string prefix(std::string_view entry) {
  return std::string(entry) + ": ";
}

// Finds two overlapping [begin, begin + count) intervals; intervals are (begin, count, index) triples.
// Returns the indices of the first overlapping pair found after sorting by begin, or {-1, -1}.
std::pair<std::int64_t, std::int64_t> find_overlap(std::vector<std::array<std::int64_t, 3>> intervals) {
  std::ranges::sort(intervals);
  for (std::size_t i = 1; i < intervals.size(); ++i) {
    if (intervals[i - 1][0] + intervals[i - 1][1] > intervals[i][0])
      return {intervals[i - 1][2], intervals[i][2]};
  }
  return {-1, -1};
}

// The checks of validate_attention; `disjoint_outputs` adds the forward's "no two blocks write the same
// output rows" (the backward accumulates and reads O/LSE, so it allows shared rows).
Status validate_blocks(std::string_view entry, const AttentionShape& shape,
                       std::span<const AttentionBlockDesc> blocks, bool disjoint_outputs) {
  const std::string p = prefix(entry);
  if (shape.heads <= 0) return Status::failure(p + "heads = " + std::to_string(shape.heads) + " must be > 0");
  if (shape.kv_heads <= 0)
    return Status::failure(p + "kv_heads = " + std::to_string(shape.kv_heads) + " must be > 0");
  if (shape.heads % shape.kv_heads != 0)
    return Status::failure(p + "heads = " + std::to_string(shape.heads) +
                           " is not a multiple of kv_heads = " + std::to_string(shape.kv_heads));
  if (shape.head_dim <= 0)
    return Status::failure(p + "head_dim = " + std::to_string(shape.head_dim) + " must be > 0");
  if (shape.q_tokens < 0 || shape.kv_tokens < 0 || shape.out_rows < 0)
    return Status::failure(p + "q_tokens, kv_tokens and out_rows must be >= 0");

  std::vector<std::array<std::int64_t, 3>> outputs;
  outputs.reserve(blocks.size());
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const AttentionBlockDesc& b = blocks[i];
    const std::string name = p + "blocks[" + std::to_string(i) + "].";
    if (b.q_count < 0)
      return Status::failure(name + "q_count = " + std::to_string(b.q_count) + " is negative");
    if (b.kv_count < 0)
      return Status::failure(name + "kv_count = " + std::to_string(b.kv_count) + " is negative");
    if (b.q_position < 0 || b.kv_position < 0)
      return Status::failure(name + "q_position/kv_position must be >= 0 (got " +
                             std::to_string(b.q_position) + ", " + std::to_string(b.kv_position) + ")");
    if (b.mask != AttentionMask::causal && b.mask != AttentionMask::full)
      return Status::failure(name + "mask has an unknown value");
    if (b.q_count == 0) continue;
    if (b.q_row < 0 || b.q_row + b.q_count > shape.q_tokens)
      return Status::failure(name + "q rows [" + std::to_string(b.q_row) + ", " +
                             std::to_string(b.q_row + b.q_count) + ") are outside Q's " +
                             std::to_string(shape.q_tokens) + " rows");
    if (b.kv_count > 0 && (b.kv_row < 0 || b.kv_row + b.kv_count > shape.kv_tokens))
      return Status::failure(name + "kv rows [" + std::to_string(b.kv_row) + ", " +
                             std::to_string(b.kv_row + b.kv_count) + ") are outside K/V's " +
                             std::to_string(shape.kv_tokens) + " rows");
    if (b.out_row < 0 || b.out_row + b.q_count > shape.out_rows)
      return Status::failure(name + "output rows [" + std::to_string(b.out_row) + ", " +
                             std::to_string(b.out_row + b.q_count) + ") are outside O's " +
                             std::to_string(shape.out_rows) + " rows");
    outputs.push_back({b.out_row, b.q_count, static_cast<std::int64_t>(i)});
  }
  if (!disjoint_outputs) return Status::success();
  const auto [first, second] = find_overlap(std::move(outputs));
  if (first >= 0)
    return Status::failure(p + "blocks[" + std::to_string(first) + "] and blocks[" + std::to_string(second) +
                           "] write overlapping output rows");
  return Status::success();
}

}  // namespace

Status validate_attention(std::string_view entry, const AttentionShape& shape,
                          std::span<const AttentionBlockDesc> blocks) {
  return validate_blocks(entry, shape, blocks, true);
}

Status validate_attention_backward(std::string_view entry, const AttentionShape& shape,
                                   std::span<const AttentionBlockDesc> blocks) {
  return validate_blocks(entry, shape, blocks, false);
}

std::int64_t total_rows(std::span<const RowRange> ranges) {
  std::int64_t total = 0;
  for (const RowRange& r : ranges) total += r.rows;
  return total;
}

Status validate_row_ranges(std::string_view entry, std::span<const RowRange> ranges, std::size_t row_bytes,
                           std::int64_t packed_rows, std::int64_t contiguous_rows, bool check_overlap) {
  const std::string p = prefix(entry);
  if (row_bytes == 0) return Status::failure(p + "row_bytes must be > 0");
  std::vector<std::array<std::int64_t, 3>> intervals;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const RowRange& r = ranges[i];
    if (r.rows < 0)
      return Status::failure(p + "ranges[" + std::to_string(i) + "].rows = " + std::to_string(r.rows) +
                             " is negative");
    if (r.rows == 0) continue;
    if (r.packed_row < 0 || r.packed_row + r.rows > packed_rows)
      return Status::failure(p + "ranges[" + std::to_string(i) + "] rows [" + std::to_string(r.packed_row) +
                             ", " + std::to_string(r.packed_row + r.rows) +
                             ") are outside the packed buffer's " + std::to_string(packed_rows) + " rows");
    intervals.push_back({r.packed_row, r.rows, static_cast<std::int64_t>(i)});
  }
  const std::int64_t needed = total_rows(ranges);
  if (contiguous_rows < needed)
    return Status::failure(p + "contiguous buffer has " + std::to_string(contiguous_rows) +
                           " rows, the ranges need " + std::to_string(needed));
  if (check_overlap) {
    const auto [first, second] = find_overlap(std::move(intervals));
    if (first >= 0)
      return Status::failure(p + "ranges[" + std::to_string(first) + "] and ranges[" +
                             std::to_string(second) + "] overlap in the packed buffer");
  }
  return Status::success();
}

}  // namespace zb::kernels
