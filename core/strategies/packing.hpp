#pragma once
// First-fit-decreasing packing of documents into packs of a token capacity, as the baselines' data
// loaders do (related-systems.md §5). Lengths are compared after padding to the CP alignment.
#include <cstdint>
#include <vector>

namespace zb {

struct Pack {
  std::vector<int> docs;  // indices into the batch's lengths
  std::int64_t padded_tokens = 0;
};

// Pads a length to a multiple of `align` (2·P for zigzag over P ranks).
[[nodiscard]] std::int64_t pad_to(std::int64_t length, std::int64_t align);

// FFD into packs of `capacity` padded tokens. Documents longer than the capacity are not packed; the
// caller checks for them first (they are an OOM, never silently split).
[[nodiscard]] std::vector<Pack> pack_ffd(const std::vector<std::int64_t>& lengths, std::int64_t align,
                                         std::int64_t capacity);

}  // namespace zb
