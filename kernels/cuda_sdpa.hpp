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
// block is refused for its mask. A bottom-right run with as many keys as rows (a diagonal block) is also
// cuDNN's top-left causal mask, and launches in a top-left graph of its own: cuDNN's fast backward path
// (SdpaBuildOptions::square_top_left). build() refuses, naming the block, only what cuDNN cannot address
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
#include <string>
#include <vector>

#include "kernels/attention.hpp"
#include "kernels/cuda_attention.hpp"
#include "kernels/sdpa_blocks.hpp"
#include "kernels/status.hpp"

namespace zb::kernels::cuda {

// Success when this build has cudnn-frontend, libcudnn loads (version ≥ 9) and a device works;
// otherwise the reason. Callers fall back to the own kernels or skip with this message.
Status cudnn_sdpa_available();

// The loaded libcudnn's version (cudnnGetVersion: major·10000 + minor·100 + patch for cuDNN 9; needs no
// device) and the cudnn-frontend headers this library was compiled with (same encoding).
std::size_t cudnn_backend_version();
std::size_t cudnn_frontend_version();

// How the backward's cuDNN graphs are built. The defaults are the product's; the others exist so that
// the GPU check (zb_gpucheck bwd-variants) can tell which of cuDNN's ragged-layout features a wrong
// gradient comes from, on the GPU where it happens.
struct SdpaBuildOptions {
  bool ragged_accumulators = true;   // fp32 dQ/dK/dV accumulators sized by the packed totals
  bool one_entry_per_graph = false;  // one cuDNN call per entry instead of one per mask kind
  // Each graph's dQ/dK/dV scratch rows contiguous and its offsets prefix sums from 0 (its bound pointers
  // start at its first row). false: one scratch in entry order across graphs (offsets with gaps and a
  // non-zero start), the layout that gave wrong dQ on an H200 with cuDNN 9.19 (docs/KERNELS.md).
  bool graph_local_scratch = true;
  // Backward: copy each graph's Q, O, dO, LSE rows and K, V rows into contiguous buffers in entry order
  // before the call, so that every ragged offset cuDNN sees (inputs and gradients) is the prefix sum of
  // the lengths from 0, the layout cuDNN's own THD samples use. false: the tensors' own rows.
  bool packed_inputs = true;
  // Bottom-right entries with as many keys as rows launch in a graph of their own with cuDNN's top-left
  // causal alignment (the same mask for a square entry). On an H200 with cuDNN 9.19 the backward of a
  // causal 8K-32K sequence ran at 502-537 TFLOP/s top-left against 251-260 bottom-right, on the same
  // engine (zb_gpucheck time-bwd-layouts, docs/gpu-runs/2026-12-04-h200-run3). false: every causal entry
  // bottom-right, as before.
  bool square_top_left = true;
};

// The sizes of one cuDNN graph: the launched entries of one mask kind as one ragged batch (the plan derives
// them from its blocks; public so that the validation below and its test can name a graph directly).
struct SdpaGraphSpec {
  SdpaEntryKind kind = SdpaEntryKind::full;  // bottom_right_causal, square_causal or full
  AttentionShape shape;
  ElementType type = ElementType::bf16;
  bool backward = false;
  std::int64_t batch = 0, max_q = 0, max_kv = 0;
  // Backward: rows the Q-side (Q, O, Stats, dQ scratch) and KV-side (K, V, dK/dV scratch) offsets may name.
  std::int64_t total_q = 0, total_kv = 0;
  // SdpaBuildOptions::ragged_accumulators: size cuDNN's fp32 accumulators by total_q/total_kv (packed)
  // rather than batch × the longest entry (dense).
  bool ragged_accumulators = true;
};

// cudnn-frontend's Graph::validate() of one graph, for a GPU of compute capability `sm_version` (90 =
// Hopper): graph construction and validate() only, with the SM version set on the graph instead of read
// from a device, so it needs neither a GPU nor a cuDNN handle (libcudnn must load: validate() asks
// cudnnGetVersion(), which needs no device). SdpaPlan::build runs this same construction and validate()
// (with the current device's SM version) before the steps that need a handle, so the two cannot drift.
// What validate() accepts can still be refused on a GPU by check_support/build_plans (an engine's own
// limits); what it refuses, build() refuses with the same message.
Status validate_sdpa_graph(const SdpaGraphSpec& spec, int sm_version);

// validate_sdpa_graph for every graph SdpaPlan::build would make from these arguments (the same block
// split, grouping and sizes as build(), computed by the same host code), without a device. The first
// refusal is returned (build()'s own argument checks first, then cuDNN's, naming the graph);
// `graphs`, when given, receives one line per graph validated (kind, batch, s_q, s_kv, totals).
Status validate_sdpa_plan(const AttentionShape& shape, std::span<const AttentionBlockDesc> blocks,
                          ElementType input_type, bool backward, int sm_version,
                          const SdpaBuildOptions& options = {}, std::vector<std::string>* graphs = nullptr);

// One graph's rows as SdpaPlan::build uploads them (host values, computed by the code build() runs): the
// entries' Q, K/V and O/LSE rows and lengths and, backward, their dQ and dK/dV scratch rows counted from
// the graph's scratch bases (SdpaBuildOptions::graph_local_scratch). For tests and diagnostics.
struct SdpaGraphRows {
  SdpaGraphSpec spec;
  // The rows cuDNN's offsets name: in the caller's tensors, or (packed_inputs) in the packed buffers.
  std::vector<std::int64_t> q_rows, kv_rows, out_rows, q_counts, kv_counts, dq_rows, dkv_rows;
  std::int64_t scratch_q_base = 0, scratch_kv_base = 0;
  // packed_inputs: the caller's rows that are copied into the packed buffers, entry by entry.
  bool packed = false;
  std::vector<std::int64_t> source_q_rows, source_kv_rows, source_out_rows;
};
Status sdpa_plan_graph_rows(const AttentionShape& shape, std::span<const AttentionBlockDesc> blocks,
                            ElementType input_type, bool backward, const SdpaBuildOptions& options,
                            std::vector<SdpaGraphRows>& graphs);

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
               ElementType input_type, bool backward, const SdpaBuildOptions& options = {});

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
