#pragma once
// Settings of the cuda executor that the scenario does not carry: how many warm-up passes and timed
// repetitions it measures (as nccl-tests: warm-up, then timed iterations; the median is reported) and
// which attention kernel it runs. ExecContext carries none of them, so make_executor uses the defaults
// below overridden by ZB_CUDA_* environment variables (docs/CUDA_BACKEND.md lists them), as the
// reference backend does with ZB_REF_*. Pure C++: parsed and tested without CUDA.
#include <chrono>
#include <string>
#include <vector>

namespace zb::cuda {

enum class AttentionKernel {
  automatic,  // cuDNN's SDPA when this build has it and it loads, else the project's own kernels
  cudnn,      // cuDNN's SDPA (forward and backward); refused when the build lacks it
  own,        // kernels/cuda_attention.hpp: forward only, so a backward pass is refused with it
};

// Whether a run first executes the correctness pass (docs/CUDA_BACKEND.md): once, untimed, on real
// rows, every attention instruction's outputs checked against the float64 oracle.
enum class VerifyMode {
  automatic,  // when the oracle's work on the busiest rank is at most kAutomaticVerifyWork
  on,         // always (the oracle may take minutes on large runs)
  off,
};

// Multiply-adds of the float64 oracle on one rank that `automatic` still verifies (a few CPU seconds).
inline constexpr double kAutomaticVerifyWork = 4e9;

struct CudaOptions {
  int warmup = 2;       // untimed layers (forward and backward) before the timed ones
  int repetitions = 5;  // timed layers; each pass's time is the median over them of the slowest rank
  AttentionKernel attention = AttentionKernel::automatic;
  VerifyMode verify = VerifyMode::automatic;
  // CUPTI's activity trace over the timed repetitions (kernels, copies, NCCL kernels per CUDA stream in
  // the Perfetto trace). Its per-kernel bookkeeping is in the timed figures; off times without it.
  bool cupti = true;
  // Measured NIC loads (docs/CUDA_BACKEND.md): each node's first rank samples its NICs' byte counters
  // around one extra layer after the timed ones. `nics` names them in the cluster's NIC order (ZB_NICS);
  // empty, the InfiniBand device closest to each rail's first GPU. Off: no extra layer, no counters.
  bool nic_sampling = true;
  std::vector<std::string> nics;
  std::chrono::microseconds nic_interval{1000};

  // The defaults overridden by ZB_CUDA_WARMUP, ZB_CUDA_REPETITIONS, ZB_CUDA_ATTENTION_KERNEL
  // (auto|cudnn|zb), ZB_CUDA_VERIFY (auto|on|off), ZB_CUDA_CUPTI (on|off), ZB_NICS (auto|off|a,b,...)
  // and ZB_NIC_INTERVAL_US. A malformed value is bad input (exit 2) naming the variable.
  [[nodiscard]] static CudaOptions from_environment();
  // Exit 2 when a count is out of range (warm-up ≥ 0, repetitions ≥ 1, both at most 10000; the NIC
  // sampling interval from 10 µs to 1 s).
  void validate() const;
};

[[nodiscard]] const char* to_string(AttentionKernel k);
[[nodiscard]] const char* to_string(VerifyMode m);

}  // namespace zb::cuda
