#pragma once
// How every timing of the GPU check is taken (zb_gpucheck time, time-cudnn, time-gemm), in one place so
// the figures compare:
//   - Inputs are random bf16, uniform in [-1, 1], from a fixed seed; never zeros: Hopper's tensor cores
//     draw less power on zero operands and then hold higher clocks, so zeros measure measurably faster
//     than real data. The values are drawn on the host into a block of kRandomBlock elements (an odd count,
//     so when the block is tiled over a tensor no two rows of any power-of-two width repeat) and copied over
//     the buffer device to device: drawing 64k·32·128 values per tensor on the host would take seconds.
//   - kWarmupRuns untimed runs (clocks ramp, lazy module loading, cuDNN/cuBLASLt first-launch work), then
//     at least kTimedRuns runs, each between two CUDA events on the stream, synchronised after each; the
//     figure is the MEDIAN (robust to a stray slow run, unlike the mean; the minimum would flatter).
//   - When one set of operands fits in the L2 cache (H100/H200: 50 MB), the runs rotate among enough sets
//     to span twice the L2, so no run reads operands the previous run left in L2.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/common/rng.hpp"
#include "kernels/cuda_attention.hpp"
#include "kernels/gpucheck/device_buffer.hpp"
#include "kernels/half.hpp"

namespace zb::kernels::gpucheck {

inline constexpr int kWarmupRuns = 3;
inline constexpr int kTimedRuns = 20;
// After this many milliseconds of timed runs, stop once kMinTimedRuns are in: a pathologically slow kernel
// must not eat the whole GPU-check budget (the count actually used is printed on the NOTE line).
inline constexpr double kTimingBudgetMs = 20000.0;
inline constexpr int kMinTimedRuns = 5;
inline constexpr std::size_t kRandomBlock = (std::size_t{1} << 24) - 3;  // 16 Mi − 3 elements, odd
inline constexpr std::size_t kL2FallbackBytes = 50u << 20;               // H100/H200 L2

// Fills `buffer` (bf16 elements) with uniform [-1, 1] values drawn from `seed` (see the top).
inline Status fill_uniform_bf16(DeviceBuffer& buffer, std::uint64_t seed, const std::string& name) {
  const std::size_t elements = buffer.bytes() / 2;
  if (elements == 0) return Status::success();
  Rng rng(seed, 0x7a1);
  std::vector<std::uint16_t> block(std::min(elements, kRandomBlock));
  for (auto& b : block) b = float_to_bf16_bits(static_cast<float>(2.0 * rng.uniform() - 1.0));
  auto* device = static_cast<std::uint16_t*>(buffer.get());
  cudaError_t error = cudaMemcpy(device, block.data(), block.size() * 2, cudaMemcpyHostToDevice);
  // Doubling device-to-device copies of the first block: log(elements / block) copies, not one per block.
  for (std::size_t done = block.size(); error == cudaSuccess && done < elements;) {
    const std::size_t count = std::min(done, elements - done);
    error = cudaMemcpy(device + done, device, count * 2, cudaMemcpyDeviceToDevice);
    done += count;
  }
  if (error != cudaSuccess)
    return Status::failure("filling " + name + " with random bf16: " + cudaGetErrorString(error));
  return Status::success();
}

// The L2 size of the current device (cudaDevAttrL2CacheSize), 50 MB when it cannot be read.
inline std::size_t l2_bytes() {
  int device = 0, bytes = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&bytes, cudaDevAttrL2CacheSize, device) != cudaSuccess || bytes <= 0)
    return kL2FallbackBytes;
  return static_cast<std::size_t>(bytes);
}

// How many operand sets of `bytes_per_set` the runs rotate among: 1 when one set is at least twice the L2,
// otherwise enough to span twice the L2 (at most 16).
inline int operand_sets(std::size_t bytes_per_set) {
  const std::size_t span = 2 * l2_bytes();
  if (bytes_per_set == 0 || bytes_per_set >= span) return 1;
  return static_cast<int>(std::min<std::size_t>(16, (span + bytes_per_set - 1) / bytes_per_set));
}

// The median of `values` (an even count: the mean of the two middle ones); 0 when empty.
inline double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::ranges::sort(values);
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

struct MedianTiming {
  double median_ms = 0;
  int timed_runs = 0;
};

// Median milliseconds of `launch(run)` on the default stream (see the top); `run` counts from 0 over the
// warm-up and timed runs, for rotating operand sets.
inline Status median_ms(const std::function<Status(int run)>& launch, const std::string& what,
                        MedianTiming& out) {
  cudaEvent_t start = nullptr, stop = nullptr;
  if (cudaEventCreate(&start) != cudaSuccess || cudaEventCreate(&stop) != cudaSuccess) {
    static_cast<void>(cudaEventDestroy(start));
    return Status::failure(what + ": cudaEventCreate failed");
  }
  std::vector<double> runs;
  double spent_ms = 0;
  Status status;
  for (int i = 0; status && static_cast<int>(runs.size()) < kTimedRuns; ++i) {
    if (spent_ms > kTimingBudgetMs && static_cast<int>(runs.size()) >= kMinTimedRuns) break;
    float ms = 0;
    if (cudaEventRecord(start, nullptr) != cudaSuccess)
      status = Status::failure(what + ": cudaEventRecord(start)");
    if (status) status = launch(i);
    if (status && cudaEventRecord(stop, nullptr) != cudaSuccess)
      status = Status::failure(what + ": cudaEventRecord(stop)");
    if (status) status = cuda::synchronize(nullptr, what);
    if (status && cudaEventElapsedTime(&ms, start, stop) != cudaSuccess)
      status = Status::failure(what + ": cudaEventElapsedTime");
    if (status && i >= kWarmupRuns) {
      runs.push_back(ms);
      spent_ms += ms;
    }
  }
  static_cast<void>(cudaEventDestroy(start));
  static_cast<void>(cudaEventDestroy(stop));
  if (!status) return status;
  out.median_ms = median(runs);
  out.timed_runs = static_cast<int>(runs.size());
  return Status::success();
}

}  // namespace zb::kernels::gpucheck
