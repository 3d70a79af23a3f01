#pragma once
// GEMMs through cuBLASLt: C = A · B (row-major, A m×k, B k×n, C m×n), the projections and their
// gradients a Program's gemm instructions stand for. bf16/f16 in, fp32 accumulation, output in the
// input type. The algorithm is chosen once per shape by cuBLASLt's heuristic (the first result that
// fits the workspace) and kept, so a timed launch never queries. Built when the CUDA toolkit was found
// (cuBLASLt ships with it); this header needs no CUDA headers.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "kernels/cuda_attention.hpp"
#include "kernels/status.hpp"

namespace zb::kernels::cuda {

class GemmPlan {
 public:
  GemmPlan();
  ~GemmPlan();
  GemmPlan(GemmPlan&&) noexcept;
  GemmPlan& operator=(GemmPlan&&) noexcept;
  GemmPlan(const GemmPlan&) = delete;
  GemmPlan& operator=(const GemmPlan&) = delete;

  // Creates the cuBLASLt handle and layouts and picks the algorithm (plan-time). `transpose_a` /
  // `transpose_b` read A as k×m / B as n×k (the data and weight gradients: dX = dY·Wᵀ, dW = Xᵀ·dY).
  Status build(std::int64_t m, std::int64_t n, std::int64_t k, ElementType type, bool transpose_a,
               bool transpose_b, std::size_t workspace_bytes);

  [[nodiscard]] double flops() const noexcept;  // 2·m·n·k
  // What the chosen algorithm needs (≤ the budget given to build; 0 is possible): gemm() passes exactly
  // this size to cuBLASLt, so a buffer of this many bytes (256-byte aligned) is enough.
  [[nodiscard]] std::size_t workspace_bytes() const noexcept;

  struct Impl;
  [[nodiscard]] const Impl* impl() const noexcept { return impl_.get(); }

 private:
  std::unique_ptr<Impl> impl_;
};

// C = A · B (β = 0), or C += A · B when `accumulate` (weight gradients summed over micro-batches).
// Asynchronous on `stream`; no allocation. Implemented with the column-major swap (Cᵀ = Bᵀ·Aᵀ on the same
// buffers), so a, b and c are plain row-major arrays; c may not alias a or b.
Status gemm(const GemmPlan& plan, const void* a, const void* b, void* c, void* workspace, bool accumulate,
            Stream stream);

// The loaded libcublasLt's version (cublasLtGetVersion: major·10000 + minor·100 + patch); needs no device.
std::size_t cublaslt_version();

}  // namespace zb::kernels::cuda
