#pragma once
// Internal to kernels/cuda: the launcher template behind launch_attention_bf16/f16. Each input type is
// instantiated in its own .cu file so the (slow) kernel instantiations compile in parallel.
#include <cmath>
#include <string>

#include "kernels/cuda/attention_fwd_kernel.cuh"
#include "kernels/cuda/cuda_check.hpp"

namespace zb::kernels::cuda::detail {

template <typename T>
constexpr const char* type_name() {
  if constexpr (std::is_same_v<T, float>)
    return "f32";
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return "bf16";
  else
    return "f16";
}

template <typename Elem, typename Out, int D>
Status launch_attention(const AttentionSchedule::Impl& schedule, const AttentionTensors& tensors,
                        cudaStream_t stream) {
  constexpr std::string_view entry = "attention_forward";
  if (schedule.tile_count == 0) return Status::success();
  const AttentionShape& shape = schedule.shape;
  const std::string kernel_name = std::string("attention_forward_kernel<") + type_name<Elem>() + "," +
                                  type_name<Out>() + "," + std::to_string(D) + ">";
  constexpr int smem = attention_smem_bytes<D>();
  const auto kernel = attention_forward_kernel<Elem, Out, D>;
  if (Status s = check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
                            entry, "cudaFuncSetAttribute(MaxDynamicSharedMemorySize) for " + kernel_name);
      !s)
    return s;

  AttentionParams<Elem, Out> params{};
  params.q = static_cast<const Elem*>(tensors.q);
  params.k = static_cast<const Elem*>(tensors.k);
  params.v = static_cast<const Elem*>(tensors.v);
  params.o = static_cast<Out*>(tensors.o);
  params.lse = tensors.lse;
  params.blocks = schedule.blocks;
  params.tiles = schedule.tiles;
  params.heads = shape.heads;
  params.kv_heads = shape.kv_heads;
  params.scale_log2 = static_cast<float>(1.4426950408889634 / std::sqrt(static_cast<double>(D)));

  const dim3 grid(static_cast<unsigned>(schedule.tile_count), static_cast<unsigned>(shape.heads));
  const dim3 block(kThreads);
  kernel<<<grid, block, smem, stream>>>(params);
  return check_cuda(cudaGetLastError(), entry,
                    "cudaGetLastError after " + launch_text(kernel_name, grid, block, smem));
}

// Dispatch on output type (f32 or the input type) and head dim (64 or 128); the schedule has already
// checked the head dim and the launcher the output type.
template <typename Elem>
Status launch_attention_for_input(const AttentionSchedule::Impl& schedule, const AttentionTensors& tensors,
                                  cudaStream_t stream) {
  const bool f32_out = tensors.output_type == ElementType::f32;
  if (schedule.shape.head_dim == 64)
    return f32_out ? launch_attention<Elem, float, 64>(schedule, tensors, stream)
                   : launch_attention<Elem, Elem, 64>(schedule, tensors, stream);
  return f32_out ? launch_attention<Elem, float, 128>(schedule, tensors, stream)
                 : launch_attention<Elem, Elem, 128>(schedule, tensors, stream);
}

}  // namespace zb::kernels::cuda::detail
