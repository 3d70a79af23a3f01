// CPU pack/unpack: memcpy of whole row ranges, so copies are bit for bit whatever the dtype.
#include <cstring>
#include <string>

#include "kernels/pack.hpp"

namespace zb::kernels {
namespace {

Status check_bytes(std::string_view entry, const char* name, std::size_t bytes, std::size_t row_bytes) {
  if (row_bytes != 0 && bytes % row_bytes == 0) return Status::success();
  return Status::failure(std::string(entry) + ": " + name + " has " + std::to_string(bytes) +
                         " bytes, not a multiple of row_bytes = " + std::to_string(row_bytes));
}

// Copies each range between the packed buffer and its slot in the contiguous one; `to_contiguous`
// picks the direction. Arguments are already validated.
void copy_ranges(std::span<const RowRange> ranges, std::size_t row_bytes, const std::byte* src,
                 std::byte* dst, bool to_contiguous) {
  std::size_t contiguous_offset = 0;
  for (const RowRange& r : ranges) {
    const std::size_t bytes = static_cast<std::size_t>(r.rows) * row_bytes;
    const std::size_t packed_offset = static_cast<std::size_t>(r.packed_row) * row_bytes;
    if (bytes > 0) {
      if (to_contiguous)
        std::memcpy(dst + contiguous_offset, src + packed_offset, bytes);
      else
        std::memcpy(dst + packed_offset, src + contiguous_offset, bytes);
    }
    contiguous_offset += bytes;
  }
}

}  // namespace

Status pack_rows(std::span<const RowRange> ranges, std::size_t row_bytes, std::span<const std::byte> packed,
                 std::span<std::byte> contiguous) {
  constexpr std::string_view entry = "pack_rows";
  if (Status s = check_bytes(entry, "packed", packed.size(), row_bytes); !s) return s;
  if (Status s = check_bytes(entry, "contiguous", contiguous.size(), row_bytes); !s) return s;
  const auto packed_rows = static_cast<std::int64_t>(packed.size() / row_bytes);
  const auto contiguous_rows = static_cast<std::int64_t>(contiguous.size() / row_bytes);
  if (Status s = validate_row_ranges(entry, ranges, row_bytes, packed_rows, contiguous_rows, false); !s)
    return s;
  copy_ranges(ranges, row_bytes, packed.data(), contiguous.data(), true);
  return Status::success();
}

Status unpack_rows(std::span<const RowRange> ranges, std::size_t row_bytes,
                   std::span<const std::byte> contiguous, std::span<std::byte> packed) {
  constexpr std::string_view entry = "unpack_rows";
  if (Status s = check_bytes(entry, "packed", packed.size(), row_bytes); !s) return s;
  if (Status s = check_bytes(entry, "contiguous", contiguous.size(), row_bytes); !s) return s;
  const auto packed_rows = static_cast<std::int64_t>(packed.size() / row_bytes);
  const auto contiguous_rows = static_cast<std::int64_t>(contiguous.size() / row_bytes);
  if (Status s = validate_row_ranges(entry, ranges, row_bytes, packed_rows, contiguous_rows, true); !s)
    return s;
  copy_ranges(ranges, row_bytes, contiguous.data(), packed.data(), false);
  return Status::success();
}

}  // namespace zb::kernels
