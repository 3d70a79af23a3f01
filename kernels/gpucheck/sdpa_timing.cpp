// cuDNN SDPA timing: causal bf16 forward and backward over one sequence (see sdpa_check.hpp).
#include <cuda_runtime.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "core/common/rng.hpp"
#include "kernels/cuda_sdpa.hpp"
#include "kernels/gpucheck/device_buffer.hpp"
#include "kernels/gpucheck/sdpa_check.hpp"
#include "kernels/half.hpp"

namespace zb::kernels::gpucheck {

namespace {

// Fills a device buffer of bf16 with a repeated 1 Mi-element random pattern (the values do not change
// the timing; drawing 64k·32·128 values per tensor on the host would).
Status fill_pattern(DeviceBuffer& buffer, const std::vector<std::uint16_t>& pattern, const char* name) {
  const std::size_t elements = buffer.bytes() / 2;
  for (std::size_t done = 0; done < elements; done += pattern.size()) {
    const std::size_t count = std::min(pattern.size(), elements - done);
    const cudaError_t error = cudaMemcpy(static_cast<std::uint16_t*>(buffer.get()) + done, pattern.data(),
                                         count * 2, cudaMemcpyHostToDevice);
    if (error != cudaSuccess)
      return Status::failure(std::string("cudaMemcpy(") + name +
                             " timing inputs): " + cudaGetErrorString(error));
  }
  return Status::success();
}

// Median milliseconds of `launch`: two warm-up runs, then up to 20 timed runs or about one second.
Status median_ms(const std::function<Status()>& launch, double& median) {
  cudaEvent_t start = nullptr, stop = nullptr;
  if (cudaEventCreate(&start) != cudaSuccess || cudaEventCreate(&stop) != cudaSuccess)
    return Status::failure("cudaEventCreate failed");
  std::vector<double> runs;
  double spent_ms = 0;
  Status status;
  for (int i = 0; i < 22 && (i < 5 || spent_ms < 1000.0) && status; ++i) {
    float ms = 0;
    if (cudaEventRecord(start, nullptr) != cudaSuccess)
      status = Status::failure("cudaEventRecord(start) failed");
    if (status) status = launch();
    if (status && cudaEventRecord(stop, nullptr) != cudaSuccess)
      status = Status::failure("cudaEventRecord(stop)");
    if (status) status = cuda::synchronize(nullptr, "time_sdpa_causal");
    if (status && cudaEventElapsedTime(&ms, start, stop) != cudaSuccess)
      status = Status::failure("cudaEventElapsedTime failed");
    spent_ms += ms;
    if (status && i >= 2) runs.push_back(ms);
  }
  static_cast<void>(cudaEventDestroy(start));
  static_cast<void>(cudaEventDestroy(stop));
  if (!status) return status;
  std::ranges::sort(runs);
  median = runs[runs.size() / 2];
  return Status::success();
}

}  // namespace

SdpaTiming time_sdpa_causal(std::int64_t sequence_length, int heads, int head_dim) {
  SdpaTiming timing;
  const AttentionShape shape{heads, heads, head_dim, sequence_length, sequence_length, sequence_length};
  const std::vector<AttentionBlockDesc> blocks{
      {0, sequence_length, 0, sequence_length, 0, 0, AttentionMask::causal, 0}};
  const std::size_t elements =
      static_cast<std::size_t>(sequence_length) * static_cast<std::size_t>(heads * head_dim);
  const std::size_t lse_bytes =
      static_cast<std::size_t>(sequence_length) * static_cast<std::size_t>(heads) * 4;
  Rng rng(42);
  std::vector<std::uint16_t> pattern(std::size_t{1} << 20);
  for (auto& p : pattern) p = float_to_bf16_bits(static_cast<float>(rng.normal()));
  cuda::SdpaPlan forward, backward;
  for (Status st : {forward.build(shape, blocks, cuda::ElementType::bf16, false),
                    backward.build(shape, blocks, cuda::ElementType::bf16, true)}) {
    if (!st) return {0, 0, 0, 0, st.message()};
  }
  DeviceBuffer q, k, v, o, lse, d_o, dq, dk, dv, workspace;
  const std::size_t workspace_bytes = std::max(forward.workspace_bytes(), backward.workspace_bytes());
  for (Status st :
       {q.allocate(elements * 2, "q"), k.allocate(elements * 2, "k"), v.allocate(elements * 2, "v"),
        o.allocate(elements * 2, "o"), lse.allocate(lse_bytes, "lse"), d_o.allocate(elements * 2, "d_o"),
        dq.allocate(elements * 2, "dq"), dk.allocate(elements * 2, "dk"), dv.allocate(elements * 2, "dv"),
        workspace.allocate(workspace_bytes, "workspace")}) {
    if (!st) return {0, 0, 0, 0, st.message()};
  }
  for (Status st :
       {fill_pattern(q, pattern, "q"), fill_pattern(k, pattern, "k"), fill_pattern(v, pattern, "v"),
        fill_pattern(d_o, pattern, "d_o"), dq.poison("dq"), dk.poison("dk"), dv.poison("dv")}) {
    if (!st) return {0, 0, 0, 0, st.message()};
  }
  const cuda::SdpaForwardTensors ft{q.get(),        k.get(), v.get(), o.get(), static_cast<float*>(lse.get()),
                                    workspace.get()};
  const cuda::SdpaBackwardTensors bt{
      q.get(),  k.get(),  v.get(),  o.get(),        d_o.get(), static_cast<const float*>(lse.get()),
      dq.get(), dk.get(), dv.get(), workspace.get()};
  const double flops = 4.0 * static_cast<double>(sequence_length) * static_cast<double>(sequence_length) *
                       heads * head_dim / 2.0;
  // The forward first: its O and LSE are the backward's inputs (the gradients' values do not matter here).
  if (Status st = median_ms([&] { return cuda::sdpa_forward(forward, ft, nullptr); }, timing.forward_ms); !st)
    return {0, 0, 0, 0, st.message()};
  if (Status st = median_ms([&] { return cuda::sdpa_backward(backward, bt, nullptr); }, timing.backward_ms);
      !st)
    return {timing.forward_ms, 0, 0, 0, st.message()};
  timing.forward_tflops = flops / (timing.forward_ms * 1e-3) / 1e12;
  timing.backward_tflops = 2.5 * flops / (timing.backward_ms * 1e-3) / 1e12;
  return timing;
}

}  // namespace zb::kernels::gpucheck
