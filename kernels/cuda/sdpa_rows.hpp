#pragma once
// Internal to kernels/cuda: the two row kernels the cuDNN SDPA plan needs around cuDNN's graphs
// (kernels/cuda/sdpa_rows.cu). Both are compiled by nvcc into zb_kernels_cuda, so the cuDNN sources stay
// plain C++. Pointers are device pointers; all launches are asynchronous on `stream`.
#include <cstdint>

#include "kernels/cuda_attention.hpp"
#include "kernels/status.hpp"

namespace zb::kernels::cuda::detail {

// For each of `row_count` rows listed in `rows` (device int64): O's heads × head_dim elements = 0 (in
// `type`, bf16 or f16) and LSE's heads elements = −inf. The forward's rows that see no key.
Status fill_empty_rows(const std::int64_t* rows, std::int64_t row_count, int heads, int head_dim,
                       ElementType type, void* o, float* lse, Stream stream);

// dest[dest_rows[r]] += Σ scratch[sources[first[r] .. first[r+1])], summed in fp32 in list order with the old
// destination value first and written once (rows of `row_elements` elements of `type`). The backward's
// accumulation of cuDNN's written dQ/dK/dV (kernels/sdpa_blocks.hpp, SdpaGatherMap).
Status gather_add_rows(const std::int64_t* dest_rows, const std::int64_t* first, const std::int64_t* sources,
                       std::int64_t dest_count, std::int64_t row_elements, ElementType type,
                       const void* scratch, void* dest, Stream stream);

}  // namespace zb::kernels::cuda::detail
