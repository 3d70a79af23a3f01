#pragma once
// The check after the layer. Each rank takes the output rows it holds in the linear layout (after the
// to_linear remap, so the remap is checked too) and compares them with a float64 single-sequence
// reference it computes itself: the generator gives it Q of its rows and K, V of every earlier token
// of the sequence, one key tile at a time, and a float64 softmax written apart from the kernels (it
// shares no code with the path under test) computes causal attention over the whole prefix. Memory is
// the shard's rows plus one key tile; time is O(rows · prefix), which is why the backend limits Σ s².
#include <cstdint>
#include <filesystem>
#include <string>

#include "core/exec/reference/rank_state.hpp"

namespace zb::reference {

struct RankVerification {
  double max_rel_error = 0;       // over every (token, head) row checked
  std::int64_t rows_checked = 0;  // (token, head) rows
  std::string failure;            // empty when every row is within tolerance
  std::uint64_t checksum = 0;     // FNV-1a of the output rows' bytes, linear layout order
};

// Error of one (token, head) row: max |o − ref| over the head's dims, divided by max |ref| (at least
// 1e-30). The first row above `tolerance` (or the first token without an output) becomes `failure`,
// naming the rank, the sequence and the token.
[[nodiscard]] RankVerification verify_outputs(const RankState& state, double tolerance);

// Writes <root>/<system label>/rank-<rank>.hex (label characters other than letters, digits and '-'
// become '_'; a later run of the same system overwrites): per linear-layout shard a header line, then one
// line per token with the bits of its output row in hex; after a backward pass the same for its dQ, dK and dV
// rows; the last line is the checksum of them all. Identical runs give identical files, whatever the
// transport.
void dump_outputs(const RankState& state, const std::filesystem::path& root);

}  // namespace zb::reference
