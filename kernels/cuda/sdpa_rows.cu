// The cuDNN SDPA plan's row kernels (kernels/cuda/sdpa_rows.hpp). Memory-bound and small next to the
// attention itself: one CTA per listed row, threads over the row's elements.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/sdpa_rows.hpp"

namespace zb::kernels::cuda::detail {

namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kMaxGrid = 65535;

template <typename T>
__global__ void fill_empty_rows_kernel(const std::int64_t* rows, std::int64_t row_count, int heads,
                                       int head_dim, T* o, float* lse) {
  const std::int64_t row_elements = static_cast<std::int64_t>(heads) * head_dim;
  for (std::int64_t i = blockIdx.x; i < row_count; i += gridDim.x) {
    const std::int64_t row = rows[i];
    for (std::int64_t c = threadIdx.x; c < row_elements; c += blockDim.x) o[row * row_elements + c] = T(0.f);
    for (int h = static_cast<int>(threadIdx.x); h < heads; h += static_cast<int>(blockDim.x))
      lse[row * heads + h] = -INFINITY;
  }
}

template <typename T>
__global__ void gather_add_rows_kernel(const std::int64_t* dest_rows, const std::int64_t* first,
                                       const std::int64_t* sources, std::int64_t dest_count,
                                       std::int64_t row_elements, const T* scratch, T* dest) {
  for (std::int64_t r = blockIdx.x; r < dest_count; r += gridDim.x) {
    T* out = dest + dest_rows[r] * row_elements;
    const std::int64_t begin = first[r];
    const std::int64_t end = first[r + 1];
    for (std::int64_t c = threadIdx.x; c < row_elements; c += blockDim.x) {
      float sum = static_cast<float>(out[c]);
      for (std::int64_t s = begin; s < end; ++s)
        sum += static_cast<float>(scratch[sources[s] * row_elements + c]);
      out[c] = T(sum);
    }
  }
}

dim3 grid_for(std::int64_t rows) {
  return dim3(static_cast<unsigned>(std::min(rows, kMaxGrid)));
}

}  // namespace

Status fill_empty_rows(const std::int64_t* rows, std::int64_t row_count, int heads, int head_dim,
                       ElementType type, void* o, float* lse, Stream stream) {
  constexpr std::string_view entry = "sdpa_forward";
  if (row_count == 0) return Status::success();
  const dim3 grid = grid_for(row_count);
  if (type == ElementType::bf16) {
    fill_empty_rows_kernel<__nv_bfloat16><<<grid, kThreads, 0, stream>>>(rows, row_count, heads, head_dim,
                                                                         static_cast<__nv_bfloat16*>(o), lse);
  } else if (type == ElementType::f16) {
    fill_empty_rows_kernel<__half>
        <<<grid, kThreads, 0, stream>>>(rows, row_count, heads, head_dim, static_cast<__half*>(o), lse);
  } else {
    return Status::failure(std::string(entry) + ": fill_empty_rows: the element type must be bf16 or f16");
  }
  return check_cuda(
      cudaGetLastError(), entry,
      "cudaGetLastError after " + launch_text("fill_empty_rows_kernel", grid, dim3(kThreads), 0));
}

Status gather_add_rows(const std::int64_t* dest_rows, const std::int64_t* first, const std::int64_t* sources,
                       std::int64_t dest_count, std::int64_t row_elements, ElementType type,
                       const void* scratch, void* dest, Stream stream) {
  constexpr std::string_view entry = "sdpa_backward";
  if (dest_count == 0) return Status::success();
  const dim3 grid = grid_for(dest_count);
  if (type == ElementType::bf16) {
    gather_add_rows_kernel<__nv_bfloat16><<<grid, kThreads, 0, stream>>>(
        dest_rows, first, sources, dest_count, row_elements, static_cast<const __nv_bfloat16*>(scratch),
        static_cast<__nv_bfloat16*>(dest));
  } else if (type == ElementType::f16) {
    gather_add_rows_kernel<__half>
        <<<grid, kThreads, 0, stream>>>(dest_rows, first, sources, dest_count, row_elements,
                                        static_cast<const __half*>(scratch), static_cast<__half*>(dest));
  } else {
    return Status::failure(std::string(entry) + ": gather_add_rows: the element type must be bf16 or f16");
  }
  return check_cuda(
      cudaGetLastError(), entry,
      "cudaGetLastError after " + launch_text("gather_add_rows_kernel", grid, dim3(kThreads), 0));
}

}  // namespace zb::kernels::cuda::detail
