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

// The resident variant (zb_gpucheck interference's "copy-resident"): the same copy of the first bytes / 16
// vectors, cycled over until *stop (host-mapped memory) is non-zero or max_ns have passed since a CTA began.
// Each CTA first stores its SM id + 1 to started[its index] (host-mapped, `ctas` entries) so that the host
// knows every CTA is resident; the vectors copied are added to *copied (device memory). Comm-first: the
// host launches the compute kernel only once every CTA has said it started.
cudaError_t launch_comm_copy_resident(const void* src, void* dst, std::size_t bytes, int ctas,
                                      unsigned* started, const unsigned* stop, unsigned long long* copied,
                                      unsigned long long max_ns, cudaStream_t stream);

// The subcommand: every figure on stdout (device checked by the caller). 0 when every figure that this
// build can measure was measured; 1 on a CUDA/cuBLASLt/cuDNN/NCCL error (printed, the rest still run).
int run_interference();

}  // namespace zb::kernels::gpucheck
