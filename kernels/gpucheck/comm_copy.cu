// The "comm-like" copy kernel of zb_gpucheck interference (interference.hpp).
#include <cstdint>

#include "kernels/gpucheck/interference.hpp"

namespace zb::kernels::gpucheck {

namespace {

constexpr int kUnroll = 4;

__global__ void __launch_bounds__(kCommCopyThreads)
    comm_copy_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, std::size_t vectors,
                     const unsigned char* __restrict__ src_tail, unsigned char* __restrict__ dst_tail,
                     std::size_t tail_bytes) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  // kUnroll loads in flight per thread before their stores, as NCCL's copy loops do: with only 8–32 CTAs,
  // one load at a time would leave most of HBM's latency exposed.
  for (std::size_t base = first; base < vectors; base += stride * kUnroll) {
    uint4 v[kUnroll] = {};
#pragma unroll
    for (int j = 0; j < kUnroll; ++j)
      if (const std::size_t i = base + j * stride; i < vectors) v[j] = src[i];
#pragma unroll
    for (int j = 0; j < kUnroll; ++j)
      if (const std::size_t i = base + j * stride; i < vectors) dst[i] = v[j];
  }
  for (std::size_t i = first; i < tail_bytes; i += stride) dst_tail[i] = src_tail[i];
}

}  // namespace

cudaError_t launch_comm_copy(const void* src, void* dst, std::size_t bytes, int ctas, cudaStream_t stream) {
  if (ctas <= 0 || (reinterpret_cast<std::uintptr_t>(src) | reinterpret_cast<std::uintptr_t>(dst)) % 16 != 0)
    return cudaErrorInvalidValue;
  const std::size_t vectors = bytes / 16;
  const auto* s = static_cast<const unsigned char*>(src);
  auto* d = static_cast<unsigned char*>(dst);
  comm_copy_kernel<<<static_cast<unsigned>(ctas), kCommCopyThreads, 0, stream>>>(
      static_cast<const uint4*>(src), static_cast<uint4*>(dst), vectors, s + vectors * 16, d + vectors * 16,
      bytes - vectors * 16);
  return cudaGetLastError();
}

}  // namespace zb::kernels::gpucheck
