#include "core/qualify/cuda/gpu_kernel_probes.hpp"

#include <fmt/format.h>

#include "core/exec/cuda/cuda_check.hpp"
#include "core/qualify/cuda/gpu_support.hpp"
#include "kernels/cuda_gemm.hpp"
#ifdef ZEPPELIN_HAVE_CUDNN
#include "kernels/cuda_sdpa.hpp"
#endif

namespace zb::qualify::gpu {
namespace {

constexpr std::size_t kGemmWorkspace = std::size_t{32} << 20;  // the budget the cuda executor gives cuBLASLt

std::string subject(int node, int gpu) {
  return fmt::format("node {} GPU {}", node, gpu);
}

}  // namespace

double time_gemm(std::int64_t m, std::int64_t n, std::int64_t k, Repeats repeats, int rank) {
  const std::string what = fmt::format("qualify gemm {}×{}×{}", m, n, k);
  kernels::cuda::GemmPlan plan;
  cuda::check_status(plan.build(m, n, k, kernels::cuda::ElementType::bf16, false, false, kGemmWorkspace),
                     rank, what);
  DeviceMemory a(static_cast<std::size_t>(m * k) * 2, rank, what + ": A"),
      b(static_cast<std::size_t>(k * n) * 2, rank, what + ": B"),
      c(static_cast<std::size_t>(m * n) * 2, rank, what + ": C"),
      workspace(plan.workspace_bytes(), rank, what + ": workspace");
  a.fill_bf16(1, rank);
  b.fill_bf16(2, rank);
  const Stream stream(rank);
  return median_seconds(
      stream, repeats.warmup, repeats.repetitions,
      [&] {
        cuda::check_status(
            kernels::cuda::gemm(plan, a.get(), b.get(), c.get(), workspace.get(), false, stream.get()), rank,
            what);
      },
      rank, what);
}

std::string attention_unavailable_reason() {
#ifdef ZEPPELIN_HAVE_CUDNN
  const kernels::Status status = kernels::cuda::cudnn_sdpa_available();
  return status.ok() ? std::string() : "cuDNN SDPA cannot run here: " + status.message();
#else
  return "this build has no cuDNN SDPA (cudnn-frontend's headers were not found at configure time: "
         "scripts/install-deps.sh)";
#endif
}

AttentionSeconds time_attention(std::int64_t tokens, int heads, int kv_heads, int head_dim, bool backward,
                                Repeats repeats, int rank) {
#ifdef ZEPPELIN_HAVE_CUDNN
  namespace kc = kernels::cuda;
  const std::string what = fmt::format("qualify attention, causal {} tokens, {} heads ({} kv) × {}", tokens,
                                       heads, kv_heads, head_dim);
  const kernels::AttentionShape shape{.heads = heads,
                                      .kv_heads = kv_heads,
                                      .head_dim = head_dim,
                                      .q_tokens = tokens,
                                      .kv_tokens = tokens,
                                      .out_rows = tokens};
  const kernels::AttentionBlockDesc block = kernels::causal_self_block(tokens);
  kc::SdpaPlan forward_plan, backward_plan;
  cuda::check_status(forward_plan.build(shape, {&block, 1}, kc::ElementType::bf16, false), rank, what);
  if (backward)
    cuda::check_status(backward_plan.build(shape, {&block, 1}, kc::ElementType::bf16, true), rank, what);
  const auto q_bytes = static_cast<std::size_t>(tokens * heads * head_dim) * 2;
  const auto kv_bytes = static_cast<std::size_t>(tokens * kv_heads * head_dim) * 2;
  const std::size_t workspace_bytes =
      std::max(forward_plan.workspace_bytes(), backward ? backward_plan.workspace_bytes() : 0);
  DeviceMemory q(q_bytes, rank, what + ": Q"), k(kv_bytes, rank, what + ": K"),
      v(kv_bytes, rank, what + ": V"), o(q_bytes, rank, what + ": O"),
      lse(static_cast<std::size_t>(tokens * heads) * 4, rank, what + ": LSE"),
      workspace(workspace_bytes, rank, what + ": workspace");
  q.fill_bf16(3, rank);
  k.fill_bf16(4, rank);
  v.fill_bf16(5, rank);
  const Stream stream(rank);
  const kc::SdpaForwardTensors ft{.q = q.get(),
                                  .k = k.get(),
                                  .v = v.get(),
                                  .o = o.get(),
                                  .lse = static_cast<float*>(lse.get()),
                                  .workspace = workspace.get()};
  AttentionSeconds seconds;
  seconds.forward = median_seconds(
      stream, repeats.warmup, repeats.repetitions,
      [&] { cuda::check_status(kc::sdpa_forward(forward_plan, ft, stream.get()), rank, what); }, rank, what);
  if (!backward) return seconds;
  // The forward above left the rows' final O and LSE, which the backward reads; the gradients' values do
  // not change its time, so dQ/dK/dV simply accumulate over the repetitions.
  DeviceMemory d_o(q_bytes, rank, what + ": dO"), dq(q_bytes, rank, what + ": dQ"),
      dk(kv_bytes, rank, what + ": dK"), dv(kv_bytes, rank, what + ": dV");
  d_o.fill_bf16(6, rank);
  for (DeviceMemory* zeroed : {&dq, &dk, &dv})
    cuda::check_cuda(cudaMemset(zeroed->get(), 0, zeroed->bytes()), rank, "cudaMemset", what);
  const kc::SdpaBackwardTensors bt{.q = q.get(),
                                   .k = k.get(),
                                   .v = v.get(),
                                   .o = o.get(),
                                   .d_o = d_o.get(),
                                   .lse = static_cast<const float*>(lse.get()),
                                   .dq = dq.get(),
                                   .dk = dk.get(),
                                   .dv = dv.get(),
                                   .workspace = workspace.get()};
  seconds.backward = median_seconds(
      stream, repeats.warmup, repeats.repetitions,
      [&] { cuda::check_status(kc::sdpa_backward(backward_plan, bt, stream.get()), rank, what); }, rank,
      what);
  return seconds;
#else
  static_cast<void>(tokens), static_cast<void>(heads), static_cast<void>(kv_heads),
      static_cast<void>(head_dim);
  static_cast<void>(backward), static_cast<void>(repeats);
  cuda::fail(rank, "qualify attention: " + attention_unavailable_reason());
#endif
}

std::vector<Measurement> run_gpu_compute_probes(int node, int gpu, const GpuComputeSweep& sweep,
                                                double memory_bytes, int rank,
                                                std::vector<std::string>& notes) {
  const Repeats repeats{sweep.warmup, sweep.repetitions};
  std::vector<Measurement> out;
  const std::vector<std::int64_t> sizes = gemm_sizes_that_fit(sweep, memory_bytes);
  if (sizes.size() < sweep.gemm_sizes.size())
    notes.push_back(
        fmt::format("{}: GEMM sizes above {} left out (their operands would take over half of its memory)",
                    subject(node, gpu), sizes.empty() ? 0 : sizes.back()));
  for (const std::int64_t size : sizes) {
    const double seconds = time_gemm(size, size, size, repeats, rank);
    out.push_back({.probe = Probe::gemm,
                   .subject = subject(node, gpu),
                   .shape = gemm_shape_label(size),
                   .node = node,
                   .gpu = gpu,
                   .value = gemm_flops(size, size, size) / seconds,
                   .reaches_nominal = size >= sweep.gemm_nominal_from});
  }
  if (const std::string why = attention_unavailable_reason(); !why.empty()) {
    notes.push_back(subject(node, gpu) + ": attention not measured: " + why);
    return out;
  }
  const std::vector<std::int64_t> lengths = attention_lengths_that_fit(sweep, memory_bytes);
  if (lengths.size() < sweep.attention_tokens.size())
    notes.push_back(fmt::format("{}: attention lengths above {} tokens left out (over half of its memory)",
                                subject(node, gpu), lengths.empty() ? 0 : lengths.back()));
  for (const std::int64_t tokens : lengths) {
    const AttentionSeconds seconds =
        time_attention(tokens, sweep.heads, sweep.heads, sweep.head_dim, false, repeats, rank);
    out.push_back({.probe = Probe::attention,
                   .subject = subject(node, gpu),
                   .shape = attention_shape_label(tokens, sweep.heads, sweep.head_dim),
                   .node = node,
                   .gpu = gpu,
                   .value = causal_attention_flops(tokens, sweep.heads, sweep.head_dim) / seconds.forward,
                   .reaches_nominal = tokens >= sweep.attention_nominal_from});
  }
  return out;
}

}  // namespace zb::qualify::gpu
