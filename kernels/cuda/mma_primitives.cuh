#pragma once
// Internal to kernels/cuda: the PTX building blocks of the attention kernel. cp.async copies global →
// shared without staging through registers (so loads overlap the MMAs), ldmatrix feeds the tensor cores
// from shared memory in their fragment layout, and mma.sync m16n8k16 does the math (fp32 accumulators).
// Shared tiles are XOR-swizzled in 16-byte chunks so ldmatrix's 8 row addresses hit 8 different bank
// groups: chunk c of row r is stored at chunk c ^ (r % 8).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace zb::kernels::cuda::detail {

// Element offset of (row, col) in a swizzled [rows][D] tile; col is a multiple of 8 for ldmatrix.
template <int D>
__device__ __forceinline__ int swizzled(int row, int col) {
  return row * D + ((((col >> 3) ^ (row & 7))) << 3) + (col & 7);
}

__device__ __forceinline__ std::uint32_t shared_address(const void* pointer) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(pointer));
}

// 16-byte async copy; when !valid nothing is read and the destination is zero-filled, so rows past the
// end of a block become zeros (never NaN garbage that 0·NaN would spread).
__device__ __forceinline__ void cp_async_16(void* shared, const void* global, bool valid) {
  const int source_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(shared)), "l"(global),
               "r"(source_bytes));
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
__device__ __forceinline__ void cp_async_wait_all() {
  asm volatile("cp.async.wait_group 0;\n" ::: "memory");
}

__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], const void* shared) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(shared)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], const void* shared) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(shared)));
}

// c += a·b for one m16n8k16 tile; a: 4 registers of 2 elements, b: 2 registers.
template <typename Elem>
__device__ __forceinline__ void mma_16816(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                          std::uint32_t b1);

template <>
__device__ __forceinline__ void mma_16816<__nv_bfloat16>(float (&c)[4], const std::uint32_t (&a)[4],
                                                         std::uint32_t b0, std::uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

template <>
__device__ __forceinline__ void mma_16816<__half>(float (&c)[4], const std::uint32_t (&a)[4],
                                                  std::uint32_t b0, std::uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Two floats → one register of two elements, the first in the low half (the lower column).
template <typename Elem>
__device__ __forceinline__ std::uint32_t pack_pair(float low, float high);

template <>
__device__ __forceinline__ std::uint32_t pack_pair<__nv_bfloat16>(float low, float high) {
  const __nv_bfloat162 pair = __floats2bfloat162_rn(low, high);
  std::uint32_t bits;
  memcpy(&bits, &pair, sizeof(bits));
  return bits;
}

template <>
__device__ __forceinline__ std::uint32_t pack_pair<__half>(float low, float high) {
  const __half2 pair = __floats2half2_rn(low, high);
  std::uint32_t bits;
  memcpy(&bits, &pair, sizeof(bits));
  return bits;
}

// Stores two adjacent output elements (the column is even, so the pair is aligned).
__device__ __forceinline__ void store_pair(float* out, float a, float b) {
  *reinterpret_cast<float2*>(out) = make_float2(a, b);
}
__device__ __forceinline__ void store_pair(__nv_bfloat16* out, float a, float b) {
  *reinterpret_cast<__nv_bfloat162*>(out) = __floats2bfloat162_rn(a, b);
}
__device__ __forceinline__ void store_pair(__half* out, float a, float b) {
  *reinterpret_cast<__half2*>(out) = __floats2half2_rn(a, b);
}

}  // namespace zb::kernels::cuda::detail
