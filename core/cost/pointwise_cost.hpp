#pragma once
// The memory-bound kernels of a transformer layer: what a Megatron-style Llama layer runs besides its GEMMs
// and its attention kernel (RMSNorms, RoPE, residual adds, SwiGLU, the layout copies around the attention
// kernel), charged as the bytes each reads and writes over the streaming HBM bandwidth. The layer's linear
// time (CostModel::linear_fwd_time, linear_bwd_time) includes them, and each GEMM instruction of a Program
// carries its share (lower::gemm_seconds). Formulas: docs/METRICS.md, "Memory-bound kernels".
#include "core/cost/cost_model.hpp"

namespace zb {

// A GPU's HBM bandwidth (bytes/s): its own `memory_bandwidth` when set (a TP group's grid GPU carries its
// members' sum), else the datasheet figure for its name, else the H100's bytes per peak FLOP.
[[nodiscard]] double hbm_bandwidth(const GpuSpec& gpu);
// Bytes one token moves through HBM in one layer's memory-bound kernels, forward and backward.
[[nodiscard]] double pointwise_fwd_bytes_per_token(const CostModel& cost);
[[nodiscard]] double pointwise_bwd_bytes_per_token(const CostModel& cost);
// Those bytes for `tokens` tokens at the streaming HBM bandwidth.
[[nodiscard]] double pointwise_fwd_time(const CostModel& cost, double tokens);
[[nodiscard]] double pointwise_bwd_time(const CostModel& cost, double tokens);
// The part that rides with one layer GEMM of m×k by k×n: its share n·k / gemm_params_per_layer() of the
// pointwise time of m tokens. The four GEMMs of m rows carry pointwise_*_time(m) between them, and a GEMM
// split t ways by tensor parallelism carries 1/t of its share, as each GPU of the group runs 1/t of the
// memory-bound work (sequence parallelism splits the norms and adds by rows, TP the columns of the rest).
[[nodiscard]] double pointwise_share_fwd_time(const CostModel& cost, double m, double n, double k);
[[nodiscard]] double pointwise_share_bwd_time(const CostModel& cost, double m, double n, double k);

}  // namespace zb
