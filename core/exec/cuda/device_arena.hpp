#pragma once
// Every device buffer of one rank's run, allocated up front in ONE cudaMalloc and freed after the last
// pass: no cudaMalloc, cudaMemcpy or cudaFree runs while NCCL work is in flight (they can synchronise
// the device and stall or deadlock NCCL's kernels). Users reserve sizes first (plan time), then the
// arena is allocated and filled once with deterministic pseudo-random bf16 values before any timing.
#include <cstddef>
#include <cstdint>
#include <string>

namespace zb::cuda {

class DeviceArena {
 public:
  explicit DeviceArena(int rank) : rank_(rank) {}
  ~DeviceArena();
  DeviceArena(const DeviceArena&) = delete;
  DeviceArena& operator=(const DeviceArena&) = delete;

  // Reserves `bytes` (rounded up to 256, the alignment every CUDA library accepts) and returns the
  // offset it will have. Only before allocate().
  std::size_t reserve(std::size_t bytes);
  // One cudaMalloc of everything reserved; exit 3 naming the size and the free memory when it fails.
  void allocate();
  [[nodiscard]] void* at(std::size_t offset) const;
  [[nodiscard]] std::size_t bytes() const { return size_; }
  // Pseudo-random bf16 in [-1, 1) everywhere (a 16 MiB host pattern from `seed`, uploaded piece by
  // piece, synchronously): attention and GEMMs see finite, non-trivial values; the contents carry no meaning.
  void fill_random(std::uint64_t seed);

 private:
  int rank_;
  std::size_t size_ = 0;
  char* base_ = nullptr;
};

}  // namespace zb::cuda
