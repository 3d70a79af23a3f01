// cuDNN SDPA timing: causal bf16 forward and backward over one sequence (see sdpa_check.hpp).
#include <cuda_runtime.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "kernels/cuda_sdpa.hpp"
#include "kernels/gpucheck/device_buffer.hpp"
#include "kernels/gpucheck/sdpa_check.hpp"
#include "kernels/gpucheck/timing.hpp"

namespace zb::kernels::gpucheck {

SdpaTiming time_sdpa_causal(std::int64_t sequence_length, int heads, int head_dim) {
  SdpaTiming timing;
  const AttentionShape shape{heads, heads, head_dim, sequence_length, sequence_length, sequence_length};
  const std::vector<AttentionBlockDesc> blocks{
      {0, sequence_length, 0, sequence_length, 0, 0, AttentionMask::causal, 0}};
  const std::size_t elements =
      static_cast<std::size_t>(sequence_length) * static_cast<std::size_t>(heads * head_dim);
  const std::size_t lse_bytes =
      static_cast<std::size_t>(sequence_length) * static_cast<std::size_t>(heads) * 4;
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
  // Random inputs (kernels/gpucheck/timing.hpp), dQ/dK/dV too: the gather kernel reads them.
  std::uint64_t seed = 42;
  for (auto [buffer, name] :
       {std::pair{&q, "q"}, std::pair{&k, "k"}, std::pair{&v, "v"}, std::pair{&d_o, "d_o"},
        std::pair{&dq, "dq"}, std::pair{&dk, "dk"}, std::pair{&dv, "dv"}}) {
    if (Status st = fill_uniform_bf16(*buffer, seed++, name); !st) return {0, 0, 0, 0, st.message()};
  }
  const cuda::SdpaForwardTensors ft{q.get(),        k.get(), v.get(), o.get(), static_cast<float*>(lse.get()),
                                    workspace.get()};
  const cuda::SdpaBackwardTensors bt{
      q.get(),  k.get(),  v.get(),  o.get(),        d_o.get(), static_cast<const float*>(lse.get()),
      dq.get(), dk.get(), dv.get(), workspace.get()};
  const double flops = 4.0 * static_cast<double>(sequence_length) * static_cast<double>(sequence_length) *
                       heads * head_dim / 2.0;
  // The forward first: its O and LSE are the backward's inputs (the gradients' values do not matter here).
  // Q, K, V of 8k–64k tokens are 64 MiB–512 MiB each, beyond the L2, so one operand set.
  MedianTiming f, b;
  if (Status st = median_ms([&](int) { return cuda::sdpa_forward(forward, ft, nullptr); },
                            "time_sdpa_causal forward", f);
      !st)
    return {0, 0, 0, 0, st.message()};
  timing.forward_ms = f.median_ms;
  timing.forward_runs = f.timed_runs;
  if (Status st = median_ms([&](int) { return cuda::sdpa_backward(backward, bt, nullptr); },
                            "time_sdpa_causal backward", b);
      !st)
    return {timing.forward_ms, 0, 0, 0, st.message()};
  timing.backward_ms = b.median_ms;
  timing.backward_runs = b.timed_runs;
  timing.forward_tflops = flops / (timing.forward_ms * 1e-3) / 1e12;
  timing.backward_tflops = 2.5 * flops / (timing.backward_ms * 1e-3) / 1e12;
  return timing;
}

}  // namespace zb::kernels::gpucheck
