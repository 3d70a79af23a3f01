#pragma once
// zb_gpucheck interference: how much a compute kernel slows while a communication kernel runs beside it
// on the same GPU (the cost model's comm_compute_slowdown), and what one small transfer costs. What it
// measures and prints: interference.cpp's top and docs/CUDA_BACKEND.md, "Compute/communication
// interference".
#include <cstddef>

#include <cuda_runtime.h>

namespace zb::kernels::gpucheck {

// The "comm-like" kernel: a grid-stride device-to-device copy of `bytes` with `ctas` CTAs of
// kCommCopyThreads threads, 16-byte loads and stores (src and dst 16-byte aligned; a tail of fewer than
// 16 bytes is copied byte by byte). NCCL's kernels run one CTA per channel, roughly 8–32 of them.
inline constexpr int kCommCopyThreads = 512;
cudaError_t launch_comm_copy(const void* src, void* dst, std::size_t bytes, int ctas, cudaStream_t stream);

// The subcommand: every figure on stdout (device checked by the caller). 0 when every figure that this
// build can measure was measured; 1 on a CUDA/cuBLASLt/cuDNN/NCCL error (printed, the rest still run).
int run_interference();

}  // namespace zb::kernels::gpucheck
