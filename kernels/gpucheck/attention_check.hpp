#pragma once
// The GPU correctness cases and the forward timing, shared by the GoogleTest suite
// (tests/unit/kernels/attention_cuda_test.cpp) and the standalone driver of scripts/gpu-check.sh
// (kernels/gpucheck/gpucheck_main.cpp), so both check exactly the same things.
//
// Every case draws fresh random inputs from the given seed, rounds them to bf16/fp16 (the float64 oracle
// sees the rounded values, so only the kernel's error is measured), poisons the outputs with NaN before
// the launch (a row the kernel should write but does not fails), and compares with the float64 CPU
// oracle element by element (kernels/gpucheck/elementwise.hpp): every O element within
// 2e-2·|ref| + 1e-2·max|O_ref| (the kernel rounds P to bf16/fp16 before P·V) and every LSE within 1e-3
// (natural log); the worst element and its index are reported.
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/attention.hpp"
#include "kernels/cuda_attention.hpp"
#include "kernels/gpucheck/elementwise.hpp"

namespace zb::kernels::gpucheck {

inline constexpr Tolerance kOutputTolerance{0, 2e-2, 1e-2};  // O of the own kernels (bf16/fp16 inputs)
inline constexpr Tolerance kLseTolerance{1e-3, 0, 0};        // LSE, absolute, natural log

struct AttentionCase {
  std::string name;
  AttentionShape shape;
  std::vector<AttentionBlockDesc> blocks;
  cuda::ElementType input_type = cuda::ElementType::bf16;
  cuda::ElementType output_type = cuda::ElementType::f32;
};

struct CheckResult {
  bool passed = false;
  double output_error = 0;  // worst |gpu − ref| / bound over the outputs (≤ 1 passes)
  double lse_error = 0;     // the same over the LSE
  std::string detail;       // why it failed (CUDA error, tolerance), empty on success
};

// Packed causal sequences (lengths not multiples of the tiles, a one-token sequence) for GQA ratios
// 1/4/8 and head dims 64/128; absolute-offset blocks (a zigzag-like split, keys after queries, a full
// block); one-token blocks; fp16 and same-type outputs.
std::vector<AttentionCase> standard_cases();

CheckResult check_attention(const AttentionCase& c, std::uint64_t seed);

// Splits a sequence's keys into two blocks computed into separate buffers, merges them on the GPU and
// compares with the unsplit float64 oracle.
CheckResult check_merge(int head_dim, std::uint64_t seed);

// Pack then unpack random rows on the GPU: the round trip and the packed buffer must match bit for bit.
CheckResult check_pack_round_trip(std::uint64_t seed);

// Causal bf16 forward, batch 1, one sequence of `sequence_length`, bf16 output (like SDPA): median
// milliseconds over the timed runs and TFLOP/s with FLOPs = 4·s²·heads·d / 2. Random inputs, warm-up,
// median of kTimedRuns CUDA-event runs: kernels/gpucheck/timing.hpp.
struct Timing {
  double milliseconds = 0;
  double tflops = 0;
  std::string error;     // non-empty when the run failed
  int timed_runs = 0;    // the median's sample count
  int operand_sets = 1;  // GEMM: sets the runs rotated among (1 when one set exceeds twice the L2)
};
Timing time_causal_forward(std::int64_t sequence_length, int heads, int head_dim);

}  // namespace zb::kernels::gpucheck
