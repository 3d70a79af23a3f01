#include "core/exec/cuda/cuda_check.hpp"

namespace zb::cuda {

void fail(int rank, const std::string& what, const std::string& hint) {
  Location where;
  where.rank = rank;
  throw Error(ExitCode::runtime, where, what, hint);
}

void check_cuda(cudaError_t code, int rank, const char* call, const std::string& context) {
  if (code == cudaSuccess) return;
  fail(rank, context + ": " + call + " failed: " + cudaGetErrorString(code));
}

void check_nccl(ncclResult_t code, int rank, const char* call, const std::string& context) {
  if (code == ncclSuccess) return;
  std::string detail = ncclGetErrorString(code);
  if (const char* last = ncclGetLastError(nullptr); last != nullptr && *last != '\0')
    detail += " (" + std::string(last) + ")";
  fail(rank, context + ": " + call + " failed: " + detail,
       "NCCL_DEBUG=WARN (or INFO) says more; every rank must run the same scenario");
}

void check_status(const kernels::Status& status, int rank, const std::string& context) {
  if (status.ok()) return;
  fail(rank, context + ": " + status.message());
}

}  // namespace zb::cuda
