#pragma once
// How the cuDNN SDPA plan (kernels/cuda_sdpa.hpp) maps the project's attention blocks onto cuDNN's masks.
// Pure host logic, in zb_kernels_cpu so it is tested on machines without a GPU.
//
// Our causal mask compares ABSOLUTE positions: query i of a block (position q_position + i) sees key j
// (position kv_position + j) iff kv_position + j ≤ q_position + i. cuDNN's masks are relative to the
// batch element, so each block becomes at most three row runs ("entries"):
//   empty       rows that see no key: O = 0, LSE = −inf, written by a fill kernel (no cuDNN launch);
//   bottom-right rows that see a prefix of the block's keys ending at their own position: with the key
//               range cut where the last of these rows' keys end, key and query ranges end at the same
//               position, which is exactly cuDNN's bottom-right causal mask (s_q ≤ s_kv always);
//   full        the rows after those, which see every key of the block (and every row of a `full` block).
// A causal block whose key range ends where its query range ends and starts at or before it is one
// bottom-right entry; one whose keys all precede its queries is one full entry; one whose keys all follow
// them is one empty entry. Splitting rows keeps the forward exact (rows are disjoint, so each output row
// is written by one entry); the backward sums the entries' dK/dV in list order (see SdpaGatherMap).
//
// Refused (Status naming blocks[i]): element offsets of a row beyond int32 (cuDNN's ragged offsets are
// int32 here), head_dim not a multiple of 8 or above 256 (cuDNN's limits on Hopper).
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "kernels/attention.hpp"
#include "kernels/status.hpp"

namespace zb::kernels {

// square_causal is never made by split_sdpa_block: the cuDNN plan relabels a bottom-right entry with as
// many keys as rows (the usual diagonal block), whose mask is then also cuDNN's top-left causal one, so
// that it launches in a top-left graph (SdpaBuildOptions::square_top_left says why).
enum class SdpaEntryKind { empty, bottom_right_causal, full, square_causal };

// The kind as messages and graph descriptions name it.
constexpr const char* sdpa_kind_name(SdpaEntryKind kind) {
  switch (kind) {
    case SdpaEntryKind::empty:
      return "empty";
    case SdpaEntryKind::bottom_right_causal:
      return "bottom-right causal";
    case SdpaEntryKind::full:
      return "full";
    case SdpaEntryKind::square_causal:
      return "square causal (top-left)";
  }
  return "unknown";
}

struct SdpaEntry {
  SdpaEntryKind kind = SdpaEntryKind::full;
  std::int64_t block = 0;     // index of the descriptor it came from
  std::int64_t q_row = 0;     // first query row (packed Q)
  std::int64_t q_count = 0;   // > 0
  std::int64_t kv_row = 0;    // first key row (packed K/V); empty entries: unused
  std::int64_t kv_count = 0;  // > 0 except for empty entries
  std::int64_t out_row = 0;   // first row in O/LSE (and dO for the backward)
};

// The entries of one descriptor, in row order (empty, bottom-right, full). A block with q_count == 0
// gives none; kv_count == 0 gives one empty entry over all its rows.
std::vector<SdpaEntry> split_sdpa_block(const AttentionBlockDesc& block, std::int64_t block_index);

// Validates (validate_attention or validate_attention_backward, by `backward`), checks cuDNN's limits and
// splits every block, in list order. `entry` prefixes messages ("SdpaPlan::build").
Status split_sdpa_blocks(std::string_view entry, const AttentionShape& shape,
                         std::span<const AttentionBlockDesc> blocks, bool backward,
                         std::vector<SdpaEntry>& out);

// For the backward: cuDNN WRITES dQ/dK/dV of each launched entry into a compact scratch (entry e's rows
// at its own scratch rows, so entries never race), and one gather kernel then adds, for each destination
// row, the scratch rows that name it in list order, plus the destination's old value: exact list-order
// accumulation in fp32, one write per row. CSR form: destination rows dest_rows[r] take scratch rows
// sources[first[r] .. first[r + 1]).
struct SdpaGatherMap {
  std::vector<std::int64_t> dest_rows;  // sorted, distinct
  std::vector<std::int64_t> first;      // dest_rows.size() + 1
  std::vector<std::int64_t> sources;    // scratch rows
};

// `scratch_row[e]`: first scratch row of entry e; `dest_row[e]` / `count[e]`: its destination rows.
// Entries with count 0 are skipped.
SdpaGatherMap build_gather_map(std::span<const std::int64_t> dest_row, std::span<const std::int64_t> count,
                               std::span<const std::int64_t> scratch_row);

}  // namespace zb::kernels
