#pragma once
// Timing of single kernel calls on this process's GPU: a cuBLASLt bf16 GEMM (kernels/cuda_gemm.hpp) and
// cuDNN's fused SDPA over one causal sequence (kernels/cuda_sdpa.hpp), forward or backward, each the
// median of CUDA-event-timed calls after a warm-up (gpu_support.hpp). qualify sweeps them over fixed
// shapes (run_gpu_compute_probes), calibrate at the scenario model's dims.
#include <cstdint>
#include <string>
#include <vector>

#include "core/qualify/gpu_sweeps.hpp"
#include "core/qualify/measurement.hpp"

namespace zb::qualify::gpu {

struct Repeats {
  int warmup = 3;
  int repetitions = 10;
};

// Seconds of one C = A·B (row-major, A m×k, B k×n), bf16 in and out, fp32 accumulation.
[[nodiscard]] double time_gemm(std::int64_t m, std::int64_t n, std::int64_t k, Repeats repeats, int rank);

// Empty when cuDNN's SDPA can run here; otherwise why not (this build has no cudnn-frontend, libcudnn
// does not load): attention is then not measured and the run says so.
[[nodiscard]] std::string attention_unavailable_reason();

struct AttentionSeconds {
  double forward = 0;
  double backward = 0;  // 0 unless asked for
};
// One causal sequence of `tokens` rows, GQA by kv_heads.
[[nodiscard]] AttentionSeconds time_attention(std::int64_t tokens, int heads, int kv_heads, int head_dim,
                                              bool backward, Repeats repeats, int rank);

// qualify's compute figures of this GPU (named node `node`, GPU `gpu`): every GEMM and attention shape
// of the sweep that fits in `memory_bytes`; what was left out, and why, goes to `notes`.
[[nodiscard]] std::vector<Measurement> run_gpu_compute_probes(int node, int gpu, const GpuComputeSweep& sweep,
                                                              double memory_bytes, int rank,
                                                              std::vector<std::string>& notes);

}  // namespace zb::qualify::gpu
