// GemmPlan and gemm through cuBLASLt (kernels/cuda_gemm.hpp).
//
// cuBLASLt is column-major; a row-major matrix is the column-major view of its transpose, so the
// row-major C = A·B (m×n) is computed as the column-major Cᵀ = Bᵀ·Aᵀ (n×m) with the operands swapped:
// cuBLASLt's "A" is our B, its "B" is our A, and our transpose flags become its op flags on the same
// buffers. No data is moved.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <string>

#include "kernels/cuda_gemm.hpp"

namespace zb::kernels::cuda {

namespace {

constexpr std::string_view kBuild = "GemmPlan::build";

Status check_lt(cublasStatus_t status, std::string_view entry, std::string_view call) {
  if (status == CUBLAS_STATUS_SUCCESS) return Status::success();
  return Status::failure(std::string(entry) + ": " + std::string(call) + ": " +
                         cublasLtGetStatusString(status) + " (" + cublasLtGetStatusName(status) + ")");
}

}  // namespace

struct GemmPlan::Impl {
  std::int64_t m = 0, n = 0, k = 0;
  std::size_t workspace = 0;  // what the chosen algorithm needs (≤ the budget given to build)
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;  // cuBLASLt's A (our B), B (our A), C
  cublasLtMatmulAlgo_t algo{};

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {
    if (a != nullptr) static_cast<void>(cublasLtMatrixLayoutDestroy(a));
    if (b != nullptr) static_cast<void>(cublasLtMatrixLayoutDestroy(b));
    if (c != nullptr) static_cast<void>(cublasLtMatrixLayoutDestroy(c));
    if (op != nullptr) static_cast<void>(cublasLtMatmulDescDestroy(op));
    if (handle != nullptr) static_cast<void>(cublasLtDestroy(handle));
  }
};

GemmPlan::GemmPlan() : impl_(std::make_unique<Impl>()) {}
GemmPlan::~GemmPlan() = default;
GemmPlan::GemmPlan(GemmPlan&&) noexcept = default;
GemmPlan& GemmPlan::operator=(GemmPlan&&) noexcept = default;

double GemmPlan::flops() const noexcept {
  return impl_ ? 2.0 * static_cast<double>(impl_->m) * static_cast<double>(impl_->n) *
                     static_cast<double>(impl_->k)
               : 0.0;
}
std::size_t GemmPlan::workspace_bytes() const noexcept {
  return impl_ ? impl_->workspace : 0;
}

Status GemmPlan::build(std::int64_t m, std::int64_t n, std::int64_t k, ElementType type, bool transpose_a,
                       bool transpose_b, std::size_t workspace_bytes) {
  if (m <= 0 || n <= 0 || k <= 0)
    return Status::failure(std::string(kBuild) + ": m = " + std::to_string(m) + ", n = " + std::to_string(n) +
                           ", k = " + std::to_string(k) + " must all be > 0");
  if (type != ElementType::bf16 && type != ElementType::f16)
    return Status::failure(std::string(kBuild) + ": type must be bf16 or f16");
  const cudaDataType_t data = type == ElementType::bf16 ? CUDA_R_16BF : CUDA_R_16F;
  auto fresh = std::make_unique<Impl>();
  fresh->m = m, fresh->n = n, fresh->k = k;
  if (Status s = check_lt(cublasLtCreate(&fresh->handle), kBuild, "cublasLtCreate"); !s) return s;
  if (Status s = check_lt(cublasLtMatmulDescCreate(&fresh->op, CUBLAS_COMPUTE_32F, CUDA_R_32F), kBuild,
                          "cublasLtMatmulDescCreate");
      !s)
    return s;
  // Column-major view: op(A_lt) = Bᵀ (n×k), op(B_lt) = Aᵀ (k×m), C_lt = Cᵀ (n×m, ld n).
  const cublasOperation_t op_a = transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  for (Status s :
       {check_lt(cublasLtMatmulDescSetAttribute(fresh->op, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof(op_a)),
                 kBuild, "cublasLtMatmulDescSetAttribute(TRANSA)"),
        check_lt(cublasLtMatmulDescSetAttribute(fresh->op, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof(op_b)),
                 kBuild, "cublasLtMatmulDescSetAttribute(TRANSB)")}) {
    if (!s) return s;
  }
  // Stored shapes (column-major rows × cols, ld = rows): B is k×n row-major (n×k col) or, transposed,
  // n×k row-major (k×n col); A is m×k row-major (k×m col) or, transposed, k×m row-major (m×k col).
  const auto rows_cols = [](bool transposed, std::int64_t r, std::int64_t c) {
    return transposed ? std::pair{c, r} : std::pair{r, c};
  };
  const auto [a_rows, a_cols] = rows_cols(transpose_b, n, k);
  const auto [b_rows, b_cols] = rows_cols(transpose_a, k, m);
  for (Status s : {check_lt(cublasLtMatrixLayoutCreate(&fresh->a, data, static_cast<std::uint64_t>(a_rows),
                                                       static_cast<std::uint64_t>(a_cols), a_rows),
                            kBuild, "cublasLtMatrixLayoutCreate(B)"),
                   check_lt(cublasLtMatrixLayoutCreate(&fresh->b, data, static_cast<std::uint64_t>(b_rows),
                                                       static_cast<std::uint64_t>(b_cols), b_rows),
                            kBuild, "cublasLtMatrixLayoutCreate(A)"),
                   check_lt(cublasLtMatrixLayoutCreate(&fresh->c, data, static_cast<std::uint64_t>(n),
                                                       static_cast<std::uint64_t>(m), n),
                            kBuild, "cublasLtMatrixLayoutCreate(C)")}) {
    if (!s) return s;
  }
  cublasLtMatmulPreference_t preference = nullptr;
  if (Status s =
          check_lt(cublasLtMatmulPreferenceCreate(&preference), kBuild, "cublasLtMatmulPreferenceCreate");
      !s)
    return s;
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  Status chosen =
      check_lt(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &workspace_bytes, sizeof(workspace_bytes)),
               kBuild, "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)");
  if (chosen)
    chosen = check_lt(cublasLtMatmulAlgoGetHeuristic(fresh->handle, fresh->op, fresh->a, fresh->b, fresh->c,
                                                     fresh->c, preference, 1, &result, &found),
                      kBuild, "cublasLtMatmulAlgoGetHeuristic");
  static_cast<void>(cublasLtMatmulPreferenceDestroy(preference));
  if (!chosen) return chosen;
  if (found == 0)
    return Status::failure(std::string(kBuild) +
                           ": cublasLtMatmulAlgoGetHeuristic found no algorithm for m = " +
                           std::to_string(m) + ", n = " + std::to_string(n) + ", k = " + std::to_string(k) +
                           " within " + std::to_string(workspace_bytes) + " workspace bytes");
  fresh->algo = result.algo;
  fresh->workspace = result.workspaceSize;
  impl_ = std::move(fresh);
  return Status::success();
}

Status gemm(const GemmPlan& plan, const void* a, const void* b, void* c, void* workspace, bool accumulate,
            Stream stream) {
  constexpr std::string_view entry = "gemm";
  const GemmPlan::Impl* p = plan.impl();
  if (p == nullptr || p->handle == nullptr)
    return Status::failure(std::string(entry) + ": the plan was not built (or was moved from)");
  if (a == nullptr || b == nullptr || c == nullptr)
    return Status::failure(std::string(entry) + ": " +
                           (a == nullptr   ? "a"
                            : b == nullptr ? "b"
                                           : "c") +
                           " is null");
  if (p->workspace > 0 && workspace == nullptr)
    return Status::failure(std::string(entry) + ": workspace is null but the algorithm needs " +
                           std::to_string(p->workspace) + " bytes (GemmPlan::workspace_bytes)");
  const float alpha = 1.0f;
  const float beta = accumulate ? 1.0f : 0.0f;
  // Operands swapped for the column-major view (see the top of this file); C is read (β) and written.
  return check_lt(cublasLtMatmul(p->handle, p->op, &alpha, b, p->a, a, p->b, &beta, c, p->c, c, p->c,
                                 &p->algo, workspace, p->workspace, stream),
                  entry, "cublasLtMatmul");
}

std::size_t cublaslt_version() {
  return cublasLtGetVersion();
}

}  // namespace zb::kernels::cuda
