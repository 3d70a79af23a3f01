#pragma once
// A minimal owning device allocation for the GPU checks; allocation errors become Status values.
#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <utility>

#include "kernels/status.hpp"

namespace zb::kernels::gpucheck {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer() { static_cast<void>(cudaFree(data_)); }
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), bytes_(other.bytes_) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(bytes_, other.bytes_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  Status allocate(std::size_t bytes, const std::string& name) {
    bytes_ = bytes;
    const cudaError_t error = cudaMalloc(&data_, bytes == 0 ? 16 : bytes);
    if (error != cudaSuccess)
      return Status::failure("cudaMalloc(" + name + ", " + std::to_string(bytes) +
                             " bytes): " + cudaGetErrorString(error));
    return Status::success();
  }
  Status upload(const void* host, const std::string& name) {
    const cudaError_t error = cudaMemcpy(data_, host, bytes_, cudaMemcpyHostToDevice);
    return error == cudaSuccess
               ? Status::success()
               : Status::failure("cudaMemcpy(" + name + " to device): " + cudaGetErrorString(error));
  }
  Status download(void* host, const std::string& name) const {
    const cudaError_t error = cudaMemcpy(host, data_, bytes_, cudaMemcpyDeviceToHost);
    return error == cudaSuccess
               ? Status::success()
               : Status::failure("cudaMemcpy(" + name + " to host): " + cudaGetErrorString(error));
  }
  // All bytes 0xFF: NaN in f32, bf16 and fp16, so unwritten outputs cannot pass a comparison.
  Status poison(const std::string& name) {
    const cudaError_t error = cudaMemset(data_, 0xFF, bytes_);
    return error == cudaSuccess ? Status::success()
                                : Status::failure("cudaMemset(" + name + "): " + cudaGetErrorString(error));
  }

  [[nodiscard]] void* get() const noexcept { return data_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace zb::kernels::gpucheck
