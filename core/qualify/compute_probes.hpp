#pragma once
// The compute half of a qualification on the reference backend: the host's CPU kernels (kernels/cpu),
// the same ones the reference executor runs, timed on fixed shapes. GEMM: C = A·B at m = n = k (2·m·n·k
// FLOP). Attention: one causal sequence of `tokens` rows, 2 heads of dim 64, one block (2·2·head_dim·
// tokens·(tokens+1)/2 FLOP for QKᵀ and PV). Each figure is the best of `repetitions` runs (and of at
// least 0.2 s of runs) after one warm-up: the peak the host sustains, as nccl-tests report their best.
#include <vector>

#include "core/qualify/measurement.hpp"

namespace zb::qualify {

struct ComputeShapes {
  std::vector<int> gemm_sizes{128, 256};
  std::vector<int> attention_tokens{512, 1024};
  int repetitions = 5;
};

// Every figure of this GPU (`node`, `gpu`: how the subject is named).
[[nodiscard]] std::vector<Measurement> run_compute_probes(int node, int gpu, const ComputeShapes& shapes);

}  // namespace zb::qualify
