#pragma once
// Pack/unpack: gather and scatter of token-row ranges between a packed buffer (the tokens of many
// sequences, as laid out on a rank) and a contiguous one (a send/recv, remap or routing buffer).
// Rows are opaque bytes (row_bytes = heads · head_dim · element size), so one kernel serves Q, K, V, O
// and any dtype; copies are exact bit for bit.
//
// The contiguous side is the concatenation of the ranges in list order:
//   pack:   contiguous[Σ_{r<i} rows_r + j] = packed[ranges[i].packed_row + j]
//   unpack: packed[ranges[i].packed_row + j] = contiguous[Σ_{r<i} rows_r + j]
// Ranges of an unpack must not overlap (they would race on the GPU); a pack may read a row twice.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "kernels/status.hpp"

namespace zb::kernels {

struct RowRange {
  std::int64_t packed_row = 0;  // first row in the packed buffer
  std::int64_t rows = 0;        // number of rows (0 is allowed and copies nothing)
};

// Total rows of the contiguous side.
std::int64_t total_rows(std::span<const RowRange> ranges);

// Checks row_bytes > 0, ranges inside a packed buffer of `packed_rows` rows, a contiguous buffer of at
// least total_rows(ranges) rows, and (for unpack) no overlapping ranges.
Status validate_row_ranges(std::string_view entry, std::span<const RowRange> ranges, std::size_t row_bytes,
                           std::int64_t packed_rows, std::int64_t contiguous_rows, bool check_overlap);

// CPU versions. Buffer sizes must be multiples of row_bytes; the packed buffer's row count is its size
// divided by row_bytes.
Status pack_rows(std::span<const RowRange> ranges, std::size_t row_bytes, std::span<const std::byte> packed,
                 std::span<std::byte> contiguous);
Status unpack_rows(std::span<const RowRange> ranges, std::size_t row_bytes,
                   std::span<const std::byte> contiguous, std::span<std::byte> packed);

}  // namespace zb::kernels
