#pragma once
// Internal to kernels/cuda: turning CUDA error codes into Status messages that name the call and the
// launch ("attention_forward: cudaGetLastError after attention_forward_kernel<bf16,f32,128> grid
// (512,32) block 256 smem 65536: an illegal memory access was encountered (cudaErrorIllegalAddress)").
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "kernels/status.hpp"

namespace zb::kernels::cuda::detail {

inline Status check_cuda(cudaError_t error, std::string_view entry, std::string_view call) {
  if (error == cudaSuccess) return Status::success();
  return Status::failure(std::string(entry) + ": " + std::string(call) + ": " + cudaGetErrorString(error) +
                         " (" + cudaGetErrorName(error) + ")");
}

// Device pointers are read with 16-byte vector loads (cp.async, uint4), so their alignment is part of
// the contract; cudaMalloc gives 256 bytes.
inline Status check_aligned(std::string_view entry, const char* name, const void* pointer,
                            std::size_t alignment) {
  if (pointer == nullptr) return Status::failure(std::string(entry) + ": " + name + " is null");
  if (reinterpret_cast<std::uintptr_t>(pointer) % alignment == 0) return Status::success();
  return Status::failure(std::string(entry) + ": " + name + " is not " + std::to_string(alignment) +
                         "-byte aligned");
}

inline std::string launch_text(std::string_view kernel, dim3 grid, dim3 block, std::size_t smem) {
  return "launch of " + std::string(kernel) + " grid (" + std::to_string(grid.x) + "," +
         std::to_string(grid.y) + ") block " + std::to_string(block.x) + " smem " + std::to_string(smem);
}

}  // namespace zb::kernels::cuda::detail
