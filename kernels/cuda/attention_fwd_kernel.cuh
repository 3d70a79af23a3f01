#pragma once
// Internal to kernels/cuda: the FlashAttention-2 style forward kernel. One CTA = one tile of up to
// kBlockM query rows of one descriptor, for one head (grid: tiles × heads, one launch for the whole
// descriptor list). 8 warps, each owning 16 query rows; Q stays in registers, K and V stream through
// shared memory in kBlockN-key tiles with cp.async: V[t] loads while S = Q·K[t]ᵀ is computed, K[t+1]
// loads while O += P·V[t] is. Online softmax in the log2 domain (exp2f), fp32 accumulators.
//
// Per-thread fragment layout (mma m16n8k16, lane = 4·g + t4): accumulator element e of an n8 atom is at
// row g + 8·(e / 2), column 2·t4 + (e % 2). So each thread owns two query rows: g and g + 8.
#include <cmath>

#include "kernels/cuda/attention_schedule.hpp"
#include "kernels/cuda/mma_primitives.cuh"

namespace zb::kernels::cuda::detail {

template <typename Elem, typename Out>
struct AttentionParams {
  const Elem* q;
  const Elem* k;
  const Elem* v;
  Out* o;
  float* lse;
  const DeviceBlock* blocks;
  const DeviceTile* tiles;
  int heads;
  int kv_heads;
  float scale_log2;  // log2(e) / sqrt(head_dim): scores go straight to the exp2 domain
};

template <int D>
constexpr int attention_smem_bytes() {
  return (kBlockM + 2 * kBlockN) * D * 2;  // Q, K and V tiles of 2-byte elements
}

// Copies `Rows` rows of D elements into a swizzled shared tile; rows ≥ valid_rows become zeros.
template <int D, int Rows, typename Elem>
__device__ __forceinline__ void load_tile(Elem* tile, const Elem* first_row, std::int64_t row_stride,
                                          std::int64_t valid_rows) {
  constexpr int kChunksPerRow = D / 8;
#pragma unroll
  for (int c = static_cast<int>(threadIdx.x); c < Rows * kChunksPerRow; c += kThreads) {
    const int row = c / kChunksPerRow;
    const int col = (c % kChunksPerRow) * 8;
    const bool valid = row < valid_rows;
    cp_async_16(tile + swizzled<D>(row, col), valid ? first_row + row * row_stride + col : first_row, valid);
  }
}

// One CTA per SM in registers: capping d = 64 at 128 registers (two CTAs) spills, so both use the file.
template <typename Elem, typename Out, int D>
__global__ void __launch_bounds__(kThreads, 1) attention_forward_kernel(const AttentionParams<Elem, Out> p) {
  static_assert(D % 16 == 0 && D <= 128, "head dim must be a multiple of 16, at most 128");
  extern __shared__ __align__(128) unsigned char shared_bytes[];
  Elem* const q_tile = reinterpret_cast<Elem*>(shared_bytes);
  Elem* const k_tile = q_tile + kBlockM * D;
  Elem* const v_tile = k_tile + kBlockN * D;

  const DeviceTile tile = p.tiles[blockIdx.x];
  const DeviceBlock b = p.blocks[tile.block];
  const int head = static_cast<int>(blockIdx.y);
  const int kv_head = head / (p.heads / p.kv_heads);
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int g = lane / 4;
  const int t4 = lane % 4;
  const std::int64_t rows_here = min(static_cast<std::int64_t>(kBlockM), b.q_count - tile.q_start);
  const std::int64_t q_stride = static_cast<std::int64_t>(p.heads) * D;
  const std::int64_t kv_stride = static_cast<std::int64_t>(p.kv_heads) * D;
  const Elem* const k_first = p.k + b.kv_row * kv_stride + static_cast<std::int64_t>(kv_head) * D;
  const Elem* const v_first = p.v + b.kv_row * kv_stride + static_cast<std::int64_t>(kv_head) * D;
  const std::int64_t key_end = tile_key_end(b, tile.q_start, rows_here);
  const int key_tiles = static_cast<int>((key_end + kBlockN - 1) / kBlockN);
  // Absolute positions of this thread's two query rows.
  const std::int64_t row_in_tile[2] = {warp * 16 + g, warp * 16 + g + 8};
  const std::int64_t q_pos[2] = {b.q_position + tile.q_start + row_in_tile[0],
                                 b.q_position + tile.q_start + row_in_tile[1]};

  float acc[D / 8][4] = {};
  float row_max[2] = {-INFINITY, -INFINITY};
  float row_sum[2] = {0.f, 0.f};  // this thread's partial sums; the quad reduces them at the end
  std::uint32_t q_frag[D / 16][4];

  if (key_tiles > 0) {
    load_tile<D, kBlockM>(q_tile,
                          p.q + (b.q_row + tile.q_start) * q_stride + static_cast<std::int64_t>(head) * D,
                          q_stride, rows_here);
    load_tile<D, kBlockN>(k_tile, k_first, kv_stride, b.kv_count);
    cp_async_commit();
  }
  for (int t = 0; t < key_tiles; ++t) {
    const std::int64_t kv0 = static_cast<std::int64_t>(t) * kBlockN;
    cp_async_wait_all();
    __syncthreads();  // K[t] (and Q) landed; every warp is done reading V[t−1]
    if (t == 0) {
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk)
        ldmatrix_x4(q_frag[kk], q_tile + swizzled<D>(warp * 16 + lane % 16, kk * 16 + (lane / 16) * 8));
    }
    load_tile<D, kBlockN>(v_tile, v_first + kv0 * kv_stride, kv_stride, b.kv_count - kv0);
    cp_async_commit();

    float s[kBlockN / 8][4] = {};
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
#pragma unroll
      for (int np = 0; np < kBlockN / 16; ++np) {
        std::uint32_t k_frag[4];
        const int key = np * 16 + lane % 8 + (lane / 16) * 8;
        ldmatrix_x4(k_frag, k_tile + swizzled<D>(key, kk * 16 + ((lane / 8) % 2) * 8));
        mma_16816<Elem>(s[2 * np], q_frag[kk], k_frag[0], k_frag[1]);
        mma_16816<Elem>(s[2 * np + 1], q_frag[kk], k_frag[2], k_frag[3]);
      }
    }

    // Masking is only needed on the tile that passes the block's last key or crosses the diagonal.
    const bool past_end = kv0 + kBlockN > b.kv_count;
    const bool crosses_diagonal = b.causal && b.kv_position + kv0 + kBlockN - 1 > b.q_position + tile.q_start;
#pragma unroll
    for (int n = 0; n < kBlockN / 8; ++n) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        s[n][e] *= p.scale_log2;
        if (past_end || crosses_diagonal) {
          const std::int64_t key = kv0 + n * 8 + 2 * t4 + (e % 2);
          const bool visible = key < b.kv_count && (!b.causal || b.kv_position + key <= q_pos[e / 2]);
          if (!visible) s[n][e] = -INFINITY;
        }
      }
    }

#pragma unroll
    for (int i = 0; i < 2; ++i) {
      float new_max = row_max[i];
#pragma unroll
      for (int n = 0; n < kBlockN / 8; ++n) new_max = fmaxf(new_max, fmaxf(s[n][2 * i], s[n][2 * i + 1]));
      new_max = fmaxf(new_max, __shfl_xor_sync(0xffffffffu, new_max, 1));
      new_max = fmaxf(new_max, __shfl_xor_sync(0xffffffffu, new_max, 2));
      // A row that has seen no key yet keeps max −inf; subtracting 0 instead avoids inf − inf = NaN.
      const float base = new_max == -INFINITY ? 0.f : new_max;
      const float correction = exp2f(row_max[i] - base);
      row_max[i] = new_max;
      row_sum[i] *= correction;
#pragma unroll
      for (int dn = 0; dn < D / 8; ++dn) {
        acc[dn][2 * i] *= correction;
        acc[dn][2 * i + 1] *= correction;
      }
#pragma unroll
      for (int n = 0; n < kBlockN / 8; ++n) {
        s[n][2 * i] = exp2f(s[n][2 * i] - base);
        s[n][2 * i + 1] = exp2f(s[n][2 * i + 1] - base);
        row_sum[i] += s[n][2 * i] + s[n][2 * i + 1];
      }
    }

    cp_async_wait_all();
    __syncthreads();  // V[t] landed; every warp is done reading K[t]
    if (t + 1 < key_tiles) {
      load_tile<D, kBlockN>(k_tile, k_first + (kv0 + kBlockN) * kv_stride, kv_stride,
                            b.kv_count - kv0 - kBlockN);
      cp_async_commit();
    }

#pragma unroll
    for (int j = 0; j < kBlockN / 16; ++j) {
      // The S accumulators of atoms 2j and 2j+1 are exactly the A fragment of keys [16j, 16j+16).
      const std::uint32_t p_frag[4] = {pack_pair<Elem>(s[2 * j][0], s[2 * j][1]),
                                       pack_pair<Elem>(s[2 * j][2], s[2 * j][3]),
                                       pack_pair<Elem>(s[2 * j + 1][0], s[2 * j + 1][1]),
                                       pack_pair<Elem>(s[2 * j + 1][2], s[2 * j + 1][3])};
#pragma unroll
      for (int dp = 0; dp < D / 16; ++dp) {
        std::uint32_t v_frag[4];
        const int key = j * 16 + lane % 8 + ((lane / 8) % 2) * 8;
        ldmatrix_x4_trans(v_frag, v_tile + swizzled<D>(key, dp * 16 + (lane / 16) * 8));
        mma_16816<Elem>(acc[2 * dp], p_frag, v_frag[0], v_frag[1]);
        mma_16816<Elem>(acc[2 * dp + 1], p_frag, v_frag[2], v_frag[3]);
      }
    }
  }

#pragma unroll
  for (int i = 0; i < 2; ++i) {
    row_sum[i] += __shfl_xor_sync(0xffffffffu, row_sum[i], 1);
    row_sum[i] += __shfl_xor_sync(0xffffffffu, row_sum[i], 2);
    if (row_in_tile[i] >= rows_here) continue;
    const std::int64_t out_row = b.out_row + tile.q_start + row_in_tile[i];
    // No visible key: an empty partial result (O = 0, LSE = −inf) that merge_partials skips.
    const float inverse = row_sum[i] > 0.f ? 1.f / row_sum[i] : 0.f;
    Out* const o_row = p.o + (out_row * p.heads + head) * D;
#pragma unroll
    for (int dn = 0; dn < D / 8; ++dn)
      store_pair(o_row + dn * 8 + 2 * t4, acc[dn][2 * i] * inverse, acc[dn][2 * i + 1] * inverse);
    if (t4 == 0)
      p.lse[out_row * p.heads + head] =
          row_sum[i] > 0.f ? (row_max[i] + log2f(row_sum[i])) * 0.6931471805599453f : -INFINITY;
  }
}

}  // namespace zb::kernels::cuda::detail
