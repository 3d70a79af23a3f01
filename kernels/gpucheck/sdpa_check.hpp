#pragma once
// GPU checks of the cuDNN SDPA plan (kernels/cuda_sdpa.hpp), the cuBLASLt GEMM (kernels/cuda_gemm.hpp) and
// the GPU LSE merge with empty (−inf) sides, against float64 CPU oracles with per-element tolerances
// (kernels/gpucheck/elementwise.hpp). Shared by the GoogleTest suite (tests/unit/kernels/cudnn_sdpa_test.cpp)
// and the standalone driver (gpucheck_main.cpp). The SDPA functions exist only when ZEPPELIN_HAVE_CUDNN.
//
// A CheckResult's output_error / lse_error here are the worst per-element ratio |gpu − ref| / bound
// (≤ 1 passes) of the outputs (O, or the worst of dQ, dK, dV) and of the LSE.
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/attention.hpp"
#include "kernels/cuda_attention.hpp"
#include "kernels/cuda_sdpa.hpp"
#include "kernels/gpucheck/attention_check.hpp"
#include "kernels/gpucheck/elementwise.hpp"

namespace zb::kernels::gpucheck {

struct SdpaCase {
  std::string name;
  AttentionShape shape;
  // The forward's blocks (disjoint outputs). The backward takes O and LSE from the float64 forward over
  // these blocks (each out row is written by one block, so that is the row's final result).
  std::vector<AttentionBlockDesc> blocks;
  // The backward's blocks when they differ (ring steps sharing q, kv and out rows); empty: `blocks`.
  std::vector<AttentionBlockDesc> backward_blocks;
  cuda::ElementType type = cuda::ElementType::bf16;
};

// The tolerances of O, LSE and the gradients for bf16 or f16 inputs (stated in the driver's output).
struct SdpaTolerances {
  Tolerance o, lse, gradient;
};
SdpaTolerances sdpa_tolerances(cuda::ElementType type);

// Small enough for the float64 oracle (≤ 4k tokens): packed causal sequences (odd lengths, one token,
// GQA 1/4/8, d 64/128, bf16 and f16), a context-parallel cut with absolute positions (empty, full,
// split and unwritten rows), and a ring backward whose blocks share query, key and output rows.
std::vector<SdpaCase> sdpa_standard_cases();

CheckResult check_sdpa_forward(const SdpaCase& c, std::uint64_t seed);
// dQ/dK/dV start from random values (the plan must ADD), compared with the float64 attention_backward.
CheckResult check_sdpa_backward(const SdpaCase& c, std::uint64_t seed,
                                const cuda::SdpaBuildOptions& options = {});
// One long causal sequence on the GPU; the oracle computes only `sample_rows` rows (first, last, spread).
CheckResult check_sdpa_long_causal(std::int64_t length, int heads, int kv_heads, int head_dim,
                                   std::int64_t sample_rows, std::uint64_t seed);

// Causal bf16, batch 1, one sequence: median forward and backward milliseconds and TFLOP/s
// (forward FLOPs 4·s²·heads·d/2, backward 2.5× that, the FlashAttention convention). Random inputs,
// warm-up, median of kTimedRuns CUDA-event runs: kernels/gpucheck/timing.hpp.
struct SdpaTiming {
  double forward_ms = 0, forward_tflops = 0, backward_ms = 0, backward_tflops = 0;
  std::string error;
  int forward_runs = 0, backward_runs = 0;  // the medians' sample counts
};
SdpaTiming time_sdpa_causal(std::int64_t sequence_length, int heads, int head_dim);

// zb_gpucheck time-bwd-layouts: one causal sequence per length under cuDNN graphs that differ in one layout
// property at a time (sdpa_layout_timing.cpp says which and why); prints one LAYOUT line per graph and
// engine; 0 when every layout that cuDNN supports ran.
int run_backward_layout_timing(int heads, int head_dim, const std::vector<long long>& lengths);

// cuBLASLt GEMM against a float64 loop: C = op(A)·op(B) (+ C when `accumulate`).
CheckResult check_gemm(std::int64_t m, std::int64_t n, std::int64_t k, cuda::ElementType type,
                       bool transpose_a, bool transpose_b, bool accumulate, std::uint64_t seed);
Timing time_gemm(std::int64_t m, std::int64_t n, std::int64_t k);

// cuda::merge_partials against kernels::merge_partials (float64) on rows where either LSE or both are
// −inf, with the empty side's O holding 0 or NaN: the result must be the CPU's, without NaN.
CheckResult check_merge_empty_sides(std::uint64_t seed);

}  // namespace zb::kernels::gpucheck
