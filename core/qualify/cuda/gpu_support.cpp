#include "core/qualify/cuda/gpu_support.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/exec/cuda/cuda_check.hpp"
#include "core/qualify/gpu_sweeps.hpp"
#include "core/qualify/probe_support.hpp"
#include "kernels/half.hpp"

namespace zb::qualify::gpu {
namespace {

// Events that are destroyed however the timing ends.
struct Events {
  std::vector<cudaEvent_t> events;
  Events(std::size_t count, int rank) : events(count, nullptr) {
    for (cudaEvent_t& e : events)
      cuda::check_cuda(cudaEventCreate(&e), rank, "cudaEventCreate", "qualify timing");
  }
  ~Events() {
    for (cudaEvent_t e : events)
      if (e != nullptr) static_cast<void>(cudaEventDestroy(e));
  }
};

}  // namespace

DeviceMemory::DeviceMemory(std::size_t bytes, int rank, const std::string& what) : bytes_(bytes) {
  cuda::check_cuda(cudaMalloc(&data_, std::max<std::size_t>(bytes, 256)), rank, "cudaMalloc",
                   what + " (" + std::to_string(bytes) + " bytes)");
}

DeviceMemory::~DeviceMemory() {
  static_cast<void>(cudaFree(data_));
}

void DeviceMemory::fill_bf16(unsigned seed, int rank) {
  std::vector<float> values(std::size_t{1} << 20);
  fill_probe_values(values, seed);
  std::vector<std::uint16_t> pattern(values.size());
  std::transform(values.begin(), values.end(), pattern.begin(),
                 [](float v) { return kernels::float_to_bf16_bits(v); });
  const std::size_t pattern_bytes = pattern.size() * sizeof(std::uint16_t);
  for (std::size_t done = 0; done < bytes_; done += pattern_bytes) {
    const std::size_t count = std::min(pattern_bytes, bytes_ - done);
    cuda::check_cuda(
        cudaMemcpy(static_cast<char*>(data_) + done, pattern.data(), count, cudaMemcpyHostToDevice), rank,
        "cudaMemcpy", "qualify: filling probe operands");
  }
}

Stream::Stream(int rank) {
  cuda::check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), rank,
                   "cudaStreamCreateWithFlags", "qualify");
}

Stream::~Stream() {
  static_cast<void>(cudaStreamDestroy(stream_));
}

void Stream::synchronize(int rank, const std::string& what) const {
  cuda::check_cuda(cudaStreamSynchronize(stream_), rank, "cudaStreamSynchronize", what);
}

double median_seconds(const Stream& stream, int warmup, int repetitions, const std::function<void()>& launch,
                      int rank, const std::string& what) {
  return median_time(event_seconds(stream, warmup, repetitions, launch, rank, what));
}

std::vector<double> event_seconds(const Stream& stream, int warmup, int repetitions,
                                  const std::function<void()>& launch, int rank, const std::string& what) {
  for (int i = 0; i < warmup; ++i) launch();
  Events marks(2 * static_cast<std::size_t>(repetitions), rank);
  for (int r = 0; r < repetitions; ++r) {
    cuda::check_cuda(cudaEventRecord(marks.events[2 * r], stream.get()), rank, "cudaEventRecord", what);
    launch();
    cuda::check_cuda(cudaEventRecord(marks.events[2 * r + 1], stream.get()), rank, "cudaEventRecord", what);
  }
  stream.synchronize(rank, what);
  std::vector<double> seconds;
  for (int r = 0; r < repetitions; ++r) {
    float ms = 0;
    cuda::check_cuda(cudaEventElapsedTime(&ms, marks.events[2 * r], marks.events[2 * r + 1]), rank,
                     "cudaEventElapsedTime", what);
    seconds.push_back(ms * 1e-3);
  }
  return seconds;
}

DeviceFacts current_device(int rank) {
  int device = 0;
  cuda::check_cuda(cudaGetDevice(&device), rank, "cudaGetDevice", "qualify");
  cudaDeviceProp props{};
  cuda::check_cuda(cudaGetDeviceProperties(&props, device), rank, "cudaGetDeviceProperties", "qualify");
  return {props.name, static_cast<double>(props.totalGlobalMem)};
}

}  // namespace zb::qualify::gpu
