#include "core/exec/cuda/device_arena.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/exec/cuda/cuda_check.hpp"

namespace zb::cuda {

DeviceArena::~DeviceArena() {
  if (base_ != nullptr) cudaFree(base_);
}

std::size_t DeviceArena::reserve(std::size_t bytes) {
  if (base_ != nullptr)
    fail(rank_, "backend cuda: a buffer was reserved after the arena was allocated (a bug)");
  const std::size_t offset = size_;
  size_ += (std::max<std::size_t>(bytes, 1) + 255) / 256 * 256;
  return offset;
}

void DeviceArena::allocate() {
  const cudaError_t code = cudaMalloc(reinterpret_cast<void**>(&base_), std::max<std::size_t>(size_, 256));
  if (code == cudaSuccess) return;
  base_ = nullptr;
  std::size_t free_bytes = 0, total = 0;
  cudaGetLastError();
  cudaMemGetInfo(&free_bytes, &total);
  fail(rank_,
       "backend cuda: the rank's buffers need " + std::to_string(size_ >> 20) + " MiB of GPU memory, " +
           std::to_string(free_bytes >> 20) + " MiB of " + std::to_string(total >> 20) +
           " MiB are free (cudaMalloc: " + cudaGetErrorString(code) + ")",
       "every message gets its own receive buffer; run a smaller batch (workload.tokens_per_iteration)");
}

void* DeviceArena::at(std::size_t offset) const {
  return base_ + offset;
}

void DeviceArena::fill_random(std::uint64_t seed) {
  constexpr std::size_t kPiece = 16u << 20;
  std::vector<std::uint16_t> pattern(kPiece / 2);
  std::uint64_t state = seed * 0x9E3779B97F4A7C15ULL + 1;
  for (auto& value : pattern) {
    state += 0x9E3779B97F4A7C15ULL;  // splitmix64
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    const float x = static_cast<float>(static_cast<double>(z >> 11) * 0x1.0p-53 * 2.0 - 1.0);
    std::uint32_t bits = 0;
    std::memcpy(&bits, &x, sizeof bits);
    value = static_cast<std::uint16_t>(bits >> 16);  // bf16: the float's upper half
  }
  for (std::size_t at = 0; at < size_; at += kPiece) {
    const std::size_t n = std::min(kPiece, size_ - at);
    check_cuda(cudaMemcpy(base_ + at, pattern.data(), n, cudaMemcpyHostToDevice), rank_, "cudaMemcpy",
               "backend cuda: filling the rank's buffers");
  }
}

}  // namespace zb::cuda
