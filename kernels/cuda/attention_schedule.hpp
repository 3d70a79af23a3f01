#pragma once
// Internal to kernels/cuda: the device form of an attention schedule. One DeviceTile is one CTA's work
// (per head): up to kBlockM query rows of one descriptor. Tiles are sorted by decreasing key count so
// the long causal tiles start first and the short ones fill the tail of the launch.
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda_attention.hpp"

namespace zb::kernels::cuda::detail {

constexpr int kBlockM = 128;  // query rows per CTA: 8 warps × 16 rows (one m16 MMA row block each)
constexpr int kBlockN = 64;   // keys per shared-memory tile
constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;

struct DeviceBlock {
  std::int64_t q_row, q_count, kv_row, kv_count, q_position, kv_position, out_row;
  std::int32_t causal;
};

struct DeviceTile {
  std::int32_t block;    // index into the descriptor array
  std::int32_t q_start;  // first query row of the tile, relative to the descriptor's q_row
};

// Keys a tile of `rows` queries starting at q_start must read (a causal tile stops at its last query).
__host__ __device__ inline std::int64_t tile_key_end(const DeviceBlock& b, std::int64_t q_start,
                                                     std::int64_t rows) {
  if (!b.causal) return b.kv_count;
  const std::int64_t end = b.q_position + q_start + rows - b.kv_position;
  return end < 0 ? 0 : (end < b.kv_count ? end : b.kv_count);
}

}  // namespace zb::kernels::cuda::detail

namespace zb::kernels::cuda {

struct AttentionSchedule::Impl {
  AttentionShape shape;
  std::int64_t tile_count = 0;
  detail::DeviceBlock* blocks = nullptr;  // device
  detail::DeviceTile* tiles = nullptr;    // device
  ~Impl();
};

namespace detail {
// Per input type: dispatch on output type and head dim, launch, check the launch (attention_fwd_*.cu).
Status launch_attention_bf16(const AttentionSchedule::Impl& schedule, const AttentionTensors& tensors,
                             cudaStream_t stream);
Status launch_attention_f16(const AttentionSchedule::Impl& schedule, const AttentionTensors& tensors,
                            cudaStream_t stream);
}  // namespace detail

}  // namespace zb::kernels::cuda
