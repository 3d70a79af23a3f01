#pragma once
// cuDNN's fused scaled-dot-product attention (the kernel TransformerEngine runs, so measured times are
// what users get) for ragged THD batches, forward and backward, through the cudnn-frontend graph API.
// It takes the shapes and block descriptors of kernels/attention.hpp and kernels/attention_backward.hpp,
// so an executor switches between cuDNN and the project's own kernels (`"attention_kernel": "zb"`)
// without changing how it describes the work. Built only when cudnn-frontend's headers were found
// (ZEPPELIN_HAVE_CUDNN); pointers are device pointers; this header needs no CUDA or cuDNN headers.
//
// Semantics are those of the CPU reference: each block is a PARTIAL forward result (O and LSE over its
// own keys, merged afterwards with merge_partials), the backward takes the final O and LSE of each row
// and ACCUMULATES dQ, dK and dV. A causal block's mask compares absolute positions; cuDNN's masks are
// relative to the block, so the plan classifies each block once: a causal block whose key range ends
// where its query range ends is cuDNN's bottom-right causal mask, one whose keys all precede its queries
// is a full block, one whose keys all follow them is empty (O = 0, LSE = −inf written by a small fill
// kernel, no cuDNN launch). Any other causal block is cut by rows into those three kinds (leading rows
// that see no key, a bottom-right run, trailing rows that see every key: kernels/sdpa_blocks.hpp), so no
// block is refused for its mask; build() refuses, naming the block, only what cuDNN cannot address
// (element offsets beyond int32, head_dim not a multiple of 8 or above 256).
//
// For the executor:
//   - Workspace: workspace_bytes(), 256-byte aligned (cudaMalloc's alignment is enough); the backward's
//     includes a compact scratch for cuDNN's dQ/dK/dV (as large as the rows its blocks name, in the input
//     type), the forward's only cuDNN's own. One buffer of the larger size serves both plans of an op.
//   - Tensors: device pointers 16-byte aligned; LSE in the out_rows × heads natural-log layout above
//     (cuDNN's Stats is natural-log LSE and is declared in exactly this layout, no conversion).
//   - Backward: cuDNN writes each block's gradients into the scratch, then one gather kernel adds them
//     (and the old dQ/dK/dV value) in fp32 in block-list order: the sequential sum over blocks, in a
//     fixed order (inside one block, cuDNN's own reduction order is cuDNN's). Nothing is zeroed by the
//     plan: zero dQ/dK/dV before the first block, as for the CPU reference. O and LSE must be the rows'
//     FINAL forward results, as for attention_backward.
//   - Streams: a plan holds one cuDNN handle, which each launch points at its stream; launch one plan on
//     one stream at a time (different plans may run concurrently). The handle belongs to the device that
//     was current at build().
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "kernels/attention.hpp"
#include "kernels/cuda_attention.hpp"
#include "kernels/status.hpp"

namespace zb::kernels::cuda {

// Success when this build has cudnn-frontend, libcudnn loads (version ≥ 9) and a device works;
// otherwise the reason. Callers fall back to the own kernels or skip with this message.
Status cudnn_sdpa_available();

// One attention call's blocks, classified and uploaded, with the cuDNN graphs built for them (one per
// mask kind present) and the workspace they need. Built once per plan op, launched every layer.
class SdpaPlan {
 public:
  SdpaPlan();
  ~SdpaPlan();
  SdpaPlan(SdpaPlan&&) noexcept;
  SdpaPlan& operator=(SdpaPlan&&) noexcept;
  SdpaPlan(const SdpaPlan&) = delete;
  SdpaPlan& operator=(const SdpaPlan&) = delete;

  // Validates (validate_attention, or validate_attention_backward when `backward`), classifies,
  // uploads the ragged offsets and sequence lengths, and builds the graphs (plan-time: synchronous).
  // `input_type` is bf16 or f16; O, dO, dQ, dK, dV share it; LSE is always f32.
  Status build(const AttentionShape& shape, std::span<const AttentionBlockDesc> blocks,
               ElementType input_type, bool backward);

  [[nodiscard]] std::size_t workspace_bytes() const noexcept;
  [[nodiscard]] const AttentionShape& shape() const noexcept;

  struct Impl;
  [[nodiscard]] const Impl* impl() const noexcept { return impl_.get(); }

 private:
  std::unique_ptr<Impl> impl_;
};

struct SdpaForwardTensors {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;     // out_rows × heads × head_dim, input type
  float* lse = nullptr;  // out_rows × heads, natural log
  void* workspace = nullptr;
};

struct SdpaBackwardTensors {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  const void* o = nullptr;  // final forward output of the rows
  const void* d_o = nullptr;
  const float* lse = nullptr;  // final forward LSE of the rows
  void* dq = nullptr;          // accumulated (+=), input type
  void* dk = nullptr;
  void* dv = nullptr;
  void* workspace = nullptr;
};

// Asynchronous on `stream`; no allocation, no synchronisation (safe while NCCL work is in flight).
Status sdpa_forward(const SdpaPlan& plan, const SdpaForwardTensors& tensors, Stream stream);
Status sdpa_backward(const SdpaPlan& plan, const SdpaBackwardTensors& tensors, Stream stream);

}  // namespace zb::kernels::cuda
