// fp16 instantiations of the attention forward kernel (f32 or fp16 output, head dims 64 and 128).
#include "kernels/cuda/attention_fwd_launch.cuh"

namespace zb::kernels::cuda::detail {

Status launch_attention_f16(const AttentionSchedule::Impl& schedule, const AttentionTensors& tensors,
                            cudaStream_t stream) {
  return launch_attention_for_input<__half>(schedule, tensors, stream);
}

}  // namespace zb::kernels::cuda::detail
