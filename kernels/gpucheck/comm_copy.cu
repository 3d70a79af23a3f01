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

// The resident variant: the same 16-byte copy, cycling over the buffer until told to stop. Thread 0 of each
// CTA first writes its SM id + 1 to started[blockIdx.x] (host-mapped, made visible with
// __threadfence_system), then every kPollIterations loop iterations (2 MiB per CTA) reads *stop (host-mapped,
// volatile) and quits when it is non-zero or when max_ns have passed since the CTA started (%globaltimer: a
// host that never says stop cannot hang the GPU). *copied (device memory, zeroed by the caller) receives
// the 16-byte vectors copied.
constexpr unsigned kPollIterations = 64;

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long ns = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return ns;
}

__global__ void __launch_bounds__(kCommCopyThreads)
    comm_copy_resident_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, std::size_t vectors,
                              unsigned* started, const unsigned* stop, unsigned long long* copied,
                              unsigned long long max_ns) {
  __shared__ int quit;
  __shared__ unsigned long long began;
  if (threadIdx.x == 0) {
    unsigned sm = 0;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    *static_cast<volatile unsigned*>(&started[blockIdx.x]) = sm + 1;
    __threadfence_system();
    quit = 0;
    began = global_ns();
  }
  __syncthreads();
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  std::size_t base = first;
  unsigned long long count = 0;
  for (unsigned iteration = 1;; ++iteration) {
    uint4 v[kUnroll] = {};
#pragma unroll
    for (int j = 0; j < kUnroll; ++j)
      if (const std::size_t i = base + j * stride; i < vectors) v[j] = src[i];
#pragma unroll
    for (int j = 0; j < kUnroll; ++j) {
      if (const std::size_t i = base + j * stride; i < vectors) {
        dst[i] = v[j];
        ++count;
      }
    }
    base += stride * kUnroll;
    if (base >= vectors) base = first;  // the next pass over the buffer
    if (iteration % kPollIterations == 0) {
      __syncthreads();  // every thread has read `quit` of the previous poll
      if (threadIdx.x == 0)
        quit = *static_cast<const volatile unsigned*>(stop) != 0 || global_ns() - began > max_ns;
      __syncthreads();
      if (quit != 0) break;
    }
  }
  atomicAdd(copied, count);
}

}  // namespace

cudaError_t launch_comm_copy_resident(const void* src, void* dst, std::size_t bytes, int ctas,
                                      unsigned* started, const unsigned* stop, unsigned long long* copied,
                                      unsigned long long max_ns, cudaStream_t stream) {
  if (ctas <= 0 || bytes < 16 ||
      (reinterpret_cast<std::uintptr_t>(src) | reinterpret_cast<std::uintptr_t>(dst)) % 16 != 0)
    return cudaErrorInvalidValue;
  comm_copy_resident_kernel<<<static_cast<unsigned>(ctas), kCommCopyThreads, 0, stream>>>(
      static_cast<const uint4*>(src), static_cast<uint4*>(dst), bytes / 16, started, stop, copied, max_ns);
  return cudaGetLastError();
}

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
