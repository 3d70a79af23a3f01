#pragma once
// What the GPU probes share: device memory that frees itself, operands filled with deterministic bf16
// values, a stream, and the CUDA-event timing of docs/QUALIFY.md (warm-up, repetitions, median). Every
// failed call is exit 3 naming the rank, the probe and the call (core/exec/cuda/cuda_check.hpp).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace zb::qualify::gpu {

class DeviceMemory {
 public:
  DeviceMemory(std::size_t bytes, int rank, const std::string& what);  // cudaMalloc; exit 3 naming `what`
  ~DeviceMemory();
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  [[nodiscard]] void* get() const { return data_; }
  [[nodiscard]] std::size_t bytes() const { return bytes_; }
  // Deterministic bf16 values in [−1, 1) (a 1 Mi-element pattern, repeated): zeros would run faster
  // than real data (a GEMM on zeros draws less power), so a figure must not depend on what memory held.
  void fill_bf16(unsigned seed, int rank);

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

class Stream {
 public:
  explicit Stream(int rank);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  [[nodiscard]] cudaStream_t get() const { return stream_; }
  void synchronize(int rank, const std::string& what) const;

 private:
  cudaStream_t stream_ = nullptr;
};

// The time in seconds of each of `repetitions` calls of `launch` (which enqueues one call on `stream`),
// each between two CUDA events, after `warmup` untimed calls; one synchronisation at the end.
[[nodiscard]] std::vector<double> event_seconds(const Stream& stream, int warmup, int repetitions,
                                                const std::function<void()>& launch, int rank,
                                                const std::string& what);
// The median of event_seconds.
[[nodiscard]] double median_seconds(const Stream& stream, int warmup, int repetitions,
                                    const std::function<void()>& launch, int rank, const std::string& what);

// The name and memory of the current device.
struct DeviceFacts {
  std::string name;
  double memory_bytes = 0;
};
[[nodiscard]] DeviceFacts current_device(int rank);

}  // namespace zb::qualify::gpu
