#pragma once
// What `qualify --backend cuda` and `calibrate --backend cuda` measure on a GPU (docs/QUALIFY.md): the
// shapes of each sweep, the FLOPs the figures divide by, the bytes a probe allocates, and the labels the
// reports show. Pure C++, built everywhere, so the sweeps are tested on machines without a GPU; the
// probes themselves live in core/qualify/cuda/.
//
// Timing (CUDA events on the probe's stream): `warmup` untimed launches, then `repetitions` timed ones;
// the figure is the MEDIAN time (a GPU has no neighbours sharing its cores, so the typical launch is the
// honest figure, and a GPU that throttles under load shows it; the reference backend takes the best run
// because its ranks share a host's cores).
#include <cstdint>
#include <string>
#include <vector>

namespace zb::qualify {

// Per-GPU kernels: bf16 GEMM through cuBLASLt (kernels/cuda_gemm.hpp), causal attention through cuDNN's
// fused SDPA (kernels/cuda_sdpa.hpp), one sequence per call.
struct GpuComputeSweep {
  std::vector<std::int64_t> gemm_sizes{1024, 2048, 4096, 8192};  // m = n = k
  std::vector<std::int64_t> attention_tokens{1024, 2048, 4096, 8192, 16384, 32768, 65536};
  int heads = 32;  // kv_heads = heads: LLaMA-7B's attention, the shape kernels are benchmarked at
  int head_dim = 128;
  int warmup = 3;
  int repetitions = 10;
  // Smaller shapes cannot keep the GPU busy (launch overhead, too few tiles for 132 SMs), so only
  // shapes from these sizes on are held to the nominal floor (nominal_floors.hpp); every shape is held
  // to the relative one.
  std::int64_t gemm_nominal_from = 4096;
  std::int64_t attention_nominal_from = 8192;
};

// Per link, NCCL point-to-point (ncclSend / ncclRecv on the world communicator), as nccl-tests' sendrecv.
struct GpuLinkSweep {
  std::int64_t bytes = std::int64_t{256}
                       << 20;  // large enough for NVLink's 450 GB/s to dominate the call cost
  std::int64_t routed_chunk = std::int64_t{8} << 20;  // a routed part is forwarded chunk by chunk (pipelined)
  int warmup = 2;
  int repetitions = 5;
  int round_trips = 20;  // latency: 8-byte ping-pongs
};

// calibrate: the kernels at the scenario model's dims and single messages per link class.
struct GpuCalibrationSweep {
  std::vector<int> attention_tokens{512, 1024, 2048, 4096, 8192, 16384};
  std::vector<int> gemm_rows{256, 1024, 4096, 16384};  // m, at each of the layer's four GEMM shapes
  std::vector<std::int64_t> transfer_bytes{std::int64_t{64} << 10, std::int64_t{1} << 20,
                                           std::int64_t{16} << 20, std::int64_t{128} << 20};
  int warmup = 2;
  int repetitions = 5;
};

// FLOPs of one probe call, as the reference probes and docs/METRICS.md count them.
[[nodiscard]] double gemm_flops(std::int64_t m, std::int64_t n, std::int64_t k);  // 2·m·n·k
// 4 · head_dim · heads · T(T+1)/2: QKᵀ and PV over the causal (query, key) pairs of one sequence.
[[nodiscard]] double causal_attention_flops(std::int64_t tokens, int heads, int head_dim);

// Device bytes a probe allocates (bf16 operands; attention: Q, K, V, O and the fp32 LSE; the kernel's
// workspace comes on top and is small beside these).
[[nodiscard]] std::int64_t gemm_probe_bytes(std::int64_t size);
[[nodiscard]] std::int64_t attention_probe_bytes(std::int64_t tokens, int heads, int head_dim);

// The sweep's shapes whose operands take at most `fraction` of `memory_bytes` (a smaller GPU than the
// sweep was written for measures what fits, and the run says what it left out).
[[nodiscard]] std::vector<std::int64_t> gemm_sizes_that_fit(const GpuComputeSweep& sweep, double memory_bytes,
                                                            double fraction = 0.5);
[[nodiscard]] std::vector<std::int64_t> attention_lengths_that_fit(const GpuComputeSweep& sweep,
                                                                   double memory_bytes,
                                                                   double fraction = 0.5);

// Exit 2 (zb::Error) naming the field: empty or unsorted lists, non-positive sizes, a head_dim cuDNN
// cannot take (a multiple of 8, at most 256), fewer than one repetition.
void validate(const GpuComputeSweep& sweep);
void validate(const GpuLinkSweep& sweep);

// The labels of the figures: "m=n=k=8192", "causal 8192 tokens, 32×128", "256 MiB".
[[nodiscard]] std::string gemm_shape_label(std::int64_t size);
[[nodiscard]] std::string attention_shape_label(std::int64_t tokens, int heads, int head_dim);
[[nodiscard]] std::string transfer_shape_label(std::int64_t bytes);

// The median of `times` (for an even count the lower middle one: a run that happened); 0 when empty.
[[nodiscard]] double median_time(std::vector<double> times);

}  // namespace zb::qualify
