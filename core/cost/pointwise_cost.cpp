// The memory-bound kernels of a transformer layer (docs/METRICS.md, "Memory-bound kernels"): everything a
// Megatron-style Llama layer runs besides its GEMMs and its attention kernel, each charged as the bytes it
// reads and writes over the streaming HBM bandwidth. Every strategy runs the same kernels on the same
// tokens, so every strategy pays the same; the literals below are exact counts of tensors read and written.
#include <array>
#include <string_view>

#include "core/cost/pointwise_cost.hpp"

#include "core/cost/iteration_cost.hpp"

namespace zb {
namespace {

// HBM bandwidth by GPU (vendor datasheets, SXM parts) and the share a streaming kernel (copy, add, norm,
// gather, Adam) sustains: STREAM-like copies reach 80-90 % of it on A100/H100 (a CUDA-event-timed
// device-to-device copy and STREAM triad on an H100 SXM measure 3.0-3.1 TB/s of 3.35). A GPU not in the
// table gets the H100's bytes per peak FLOP.
struct HbmRow {
  std::string_view gpu;
  double bytes_per_second;
};
constexpr std::array<HbmRow, 4> kHbm{{
    {"A800", 2.039e12},  // A800 SXM4 80 GB (A100 80 GB memory system)
    {"H100", 3.35e12},   // H100 SXM5 80 GB
    {"H800", 3.35e12},   // H800 SXM5 80 GB
    {"H200", 4.8e12},    // H200 SXM 141 GB
}};
constexpr double kH100BytesPerFlop = 3.35e12 / 989e12;
constexpr double kStreamingEfficiency = 0.8;

}  // namespace

double hbm_bandwidth(const GpuSpec& gpu) {
  if (gpu.memory_bandwidth > 0) return gpu.memory_bandwidth;
  double bandwidth = gpu.peak_flops * kH100BytesPerFlop;
  for (const HbmRow& row : kHbm) {
    if (gpu.name == row.gpu) bandwidth = row.bytes_per_second;
  }
  return bandwidth;
}

double streaming_memory_bandwidth(const CostModel& cost) {
  return hbm_bandwidth(cost.cluster().gpu) * kStreamingEfficiency;
}

double pointwise_fwd_bytes_per_token(const CostModel& cost) {
  const ModelSpec& model = cost.model();
  const double h = model.hidden, h_kv = model.kv_hidden();
  const auto f = static_cast<double>(model.token_ffn_width());  // an MoE token's experts side by side
  // Elements one token reads + writes, in the model dtype:
  const double elements =
      2.0 * h                 // input RMSNorm: read x, write the normalised row
      + 2.0 * (h + h_kv)      // RoPE: read and write Q and K
      + 2.0 * (h + 2 * h_kv)  // Q, K, V split out of the fused projection into the attention kernel's layout
      + 2.0 * h               // the attention output back into the O projection's layout
      + 3.0 * h               // residual add after attention: read both, write the sum
      + 2.0 * h               // post-attention RMSNorm
      + 3.0 * f               // SwiGLU: read gate and up, write silu(gate)·up
      + 3.0 * h;              // residual add after the MLP
  return elements * model.dtype_bytes;
}

double pointwise_bwd_bytes_per_token(const CostModel& cost) {
  const ModelSpec& model = cost.model();
  const double h = model.hidden, h_kv = model.kv_hidden();
  const auto f = static_cast<double>(model.token_ffn_width());  // an MoE token's experts side by side
  // The backward reads more than the forward wrote: each kernel reads its saved inputs and the incoming
  // gradient and writes the input gradient.
  const double elements = 2.0 * 3.0 * h  // two RMSNorm backwards: read x and dy, write dx
                          +
                          2.0 * 3.0 * h  // two residual junctions: add the branch's gradient to the stream's
                          + 5.0 * f      // SwiGLU backward: read gate, up and dy, write dgate and dup
                          + 2.0 * (h + h_kv)       // RoPE backward on dQ and dK
                          + 2.0 * h                // dO into the attention kernel's layout
                          + 2.0 * (h + 2 * h_kv);  // dQ, dK, dV back into the fused projection's layout
  return elements * model.dtype_bytes;
}

double pointwise_fwd_time(const CostModel& cost, double tokens) {
  const CostModel::PointwiseRates& r = cost.pointwise_rates();
  return tokens > 0 ? tokens * r.fwd_bytes_per_token / r.bandwidth : 0.0;
}

double pointwise_bwd_time(const CostModel& cost, double tokens) {
  const CostModel::PointwiseRates& r = cost.pointwise_rates();
  return tokens > 0 ? tokens * r.bwd_bytes_per_token / r.bandwidth : 0.0;
}

double pointwise_share_fwd_time(const CostModel& cost, double m, double n, double k) {
  if (m <= 0 || n <= 0 || k <= 0) return 0.0;
  return pointwise_fwd_time(cost, m) * n * k / cost.gemm_params_per_layer();
}

double pointwise_share_bwd_time(const CostModel& cost, double m, double n, double k) {
  if (m <= 0 || n <= 0 || k <= 0) return 0.0;
  return pointwise_bwd_time(cost, m) * n * k / cost.gemm_params_per_layer();
}

}  // namespace zb
