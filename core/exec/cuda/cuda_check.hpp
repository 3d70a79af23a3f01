#pragma once
// How the cuda executor turns a failed CUDA, NCCL or kernel call into the project's zb::Error: exit code
// 3 (runtime), the rank, what it was doing (an instruction as lower::describe names it, or a setup
// step) and the call with its error string.
#include <string>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "core/common/error.hpp"
#include "kernels/status.hpp"

namespace zb::cuda {

[[noreturn]] void fail(int rank, const std::string& what, const std::string& hint = {});

// "<context>: <call> failed: <cudaGetErrorString>" on `rank`.
void check_cuda(cudaError_t code, int rank, const char* call, const std::string& context);
void check_nccl(ncclResult_t code, int rank, const char* call, const std::string& context);
void check_status(const kernels::Status& status, int rank, const std::string& context);

}  // namespace zb::cuda
