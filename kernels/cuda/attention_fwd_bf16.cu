// bf16 instantiations of the attention forward kernel (f32 or bf16 output, head dims 64 and 128).
#include "kernels/cuda/attention_fwd_launch.cuh"

namespace zb::kernels::cuda::detail {

Status launch_attention_bf16(const AttentionSchedule::Impl& schedule, const AttentionTensors& tensors,
                             cudaStream_t stream) {
  return launch_attention_for_input<__nv_bfloat16>(schedule, tensors, stream);
}

}  // namespace zb::kernels::cuda::detail
