// Splitting attention blocks into cuDNN entries and the backward's gather map (kernels/sdpa_blocks.hpp).
#include "kernels/sdpa_blocks.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "kernels/attention_backward.hpp"

namespace zb::kernels {

namespace {

constexpr std::int64_t kMaxRaggedOffset = std::numeric_limits<std::int32_t>::max();

// cuDNN's ragged offsets are element offsets; the end of a row range must stay addressable in int32.
Status check_offset(std::string_view entry, std::int64_t index, const char* what, std::int64_t end_row,
                    std::int64_t row_elements) {
  if (end_row <= kMaxRaggedOffset / row_elements) return Status::success();
  return Status::failure(std::string(entry) + ": blocks[" + std::to_string(index) + "]: " + what +
                         " rows end at " + std::to_string(end_row) + ", element offset " +
                         std::to_string(end_row * row_elements) + " exceeds cuDNN's int32 ragged offsets");
}

}  // namespace

std::vector<SdpaEntry> split_sdpa_block(const AttentionBlockDesc& block, std::int64_t block_index) {
  std::vector<SdpaEntry> entries;
  if (block.q_count <= 0) return entries;
  const auto make = [&](SdpaEntryKind kind, std::int64_t first, std::int64_t end, std::int64_t kv_count) {
    if (end <= first) return;
    entries.push_back(SdpaEntry{kind, block_index, block.q_row + first, end - first, block.kv_row, kv_count,
                                block.out_row + first});
  };
  const std::int64_t q = block.q_count;
  const std::int64_t n = block.kv_count;
  if (n <= 0) {
    make(SdpaEntryKind::empty, 0, q, 0);
    return entries;
  }
  if (block.mask == AttentionMask::full) {
    make(SdpaEntryKind::full, 0, q, n);
    return entries;
  }
  // Row i sees shift + i + 1 keys, clamped to [0, n]: none before empty_end, a prefix ending at its own
  // position up to row n − 1 − shift (the one whose position is the last key's), all n after it.
  const std::int64_t shift = block.q_position - block.kv_position;
  const std::int64_t empty_end = std::clamp<std::int64_t>(-shift, 0, q);
  const std::int64_t full_start = std::clamp<std::int64_t>(n - shift, empty_end, q);
  make(SdpaEntryKind::empty, 0, empty_end, 0);
  // Cut the keys where the last diagonal row's keys end (shift + full_start ≤ n): key and query ranges
  // then end at the same position, cuDNN's bottom-right alignment, with at least as many keys as rows.
  make(SdpaEntryKind::bottom_right_causal, empty_end, full_start, shift + full_start);
  make(SdpaEntryKind::full, full_start, q, n);
  return entries;
}

Status split_sdpa_blocks(std::string_view entry, const AttentionShape& shape,
                         std::span<const AttentionBlockDesc> blocks, bool backward,
                         std::vector<SdpaEntry>& out) {
  out.clear();
  Status valid =
      backward ? validate_attention_backward(entry, shape, blocks) : validate_attention(entry, shape, blocks);
  if (!valid) return valid;
  if (shape.head_dim % 8 != 0 || shape.head_dim > 256)
    return Status::failure(std::string(entry) + ": shape.head_dim = " + std::to_string(shape.head_dim) +
                           " is not supported by cuDNN SDPA (a multiple of 8, at most 256)");
  const std::int64_t q_elements = static_cast<std::int64_t>(shape.heads) * shape.head_dim;
  const std::int64_t kv_elements = static_cast<std::int64_t>(shape.kv_heads) * shape.head_dim;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const AttentionBlockDesc& b = blocks[i];
    const auto index = static_cast<std::int64_t>(i);
    for (Status s : {check_offset(entry, index, "query", b.q_row + b.q_count, q_elements),
                     check_offset(entry, index, "key", b.kv_row + b.kv_count, kv_elements),
                     check_offset(entry, index, "output", b.out_row + b.q_count, q_elements)}) {
      if (!s) return s;
    }
    for (const SdpaEntry& e : split_sdpa_block(b, index)) out.push_back(e);
  }
  return Status::success();
}

SdpaGatherMap build_gather_map(std::span<const std::int64_t> dest_row, std::span<const std::int64_t> count,
                               std::span<const std::int64_t> scratch_row) {
  std::vector<std::pair<std::int64_t, std::int64_t>> pairs;  // (destination row, scratch row), list order
  for (std::size_t e = 0; e < dest_row.size(); ++e)
    for (std::int64_t r = 0; r < count[e]; ++r) pairs.emplace_back(dest_row[e] + r, scratch_row[e] + r);
  // Stable: the sources of one destination stay in list order, so the sum is the sequential one.
  std::stable_sort(pairs.begin(), pairs.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  SdpaGatherMap map;
  map.sources.reserve(pairs.size());
  for (const auto& [dest, source] : pairs) {
    if (map.dest_rows.empty() || map.dest_rows.back() != dest) {
      map.dest_rows.push_back(dest);
      map.first.push_back(static_cast<std::int64_t>(map.sources.size()));
    }
    map.sources.push_back(source);
  }
  map.first.push_back(static_cast<std::int64_t>(map.sources.size()));
  return map;
}

}  // namespace zb::kernels
