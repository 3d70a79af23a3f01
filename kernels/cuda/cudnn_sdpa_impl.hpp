#pragma once
// Internal to zb_kernels_cudnn: what an SdpaPlan holds (kernels/cuda_sdpa.hpp). Compiled by g++ against
// cudnn-frontend; kernels/cuda/cudnn_sdpa_plan.cpp builds it, cudnn_sdpa_run.cpp launches it and
// cudnn_sdpa_graph.cpp makes the cuDNN graphs.
//
// Layouts given to cuDNN (dims are always b, h, s, d; ragged offsets are element offsets per entry):
//   Q, dQ-scratch  strides (-, d, heads·d, 1): our THD rows, ragged offset row·heads·d
//   K, V, dK/dV    strides (-, d, kv_heads·d, 1)
//   O, dO          like Q, at the out rows
//   Stats (LSE)    dims (b, heads, s, 1), strides (-, 1, heads, 1): exactly our out_rows × heads fp32
//                  natural-log LSE (cuDNN's Stats is max + ln Σ exp of the scaled scores), ragged offset
//                  out_row·heads, so no conversion kernel is needed.
#include <cuda_runtime.h>
#include <cudnn.h>
#include <cudnn_frontend.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/cuda_attention.hpp"
#include "kernels/cuda_sdpa.hpp"
#include "kernels/sdpa_blocks.hpp"

namespace zb::kernels::cuda::detail {

// An owning device array uploaded once at plan time.
class DeviceArray {
 public:
  DeviceArray() = default;
  ~DeviceArray() { static_cast<void>(cudaFree(data_)); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  DeviceArray(DeviceArray&& other) noexcept : data_(std::exchange(other.data_, nullptr)) {}
  DeviceArray& operator=(DeviceArray&& other) noexcept {
    std::swap(data_, other.data_);
    return *this;
  }

  template <typename T>
  Status upload(const std::vector<T>& host, std::string_view entry, const std::string& name);

  template <typename T>
  [[nodiscard]] T* as() const noexcept {
    return static_cast<T*>(data_);
  }

 private:
  void* data_ = nullptr;
};

// Graph tensor uids (one namespace for forward and backward graphs).
enum SdpaUid : std::int64_t {
  kUidQ = 1,
  kUidK,
  kUidV,
  kUidO,
  kUidStats,
  kUidDO,
  kUidDQ,
  kUidDK,
  kUidDV,
  kUidSeqQ,
  kUidSeqKV,
  kUidOffQ,
  kUidOffKV,
  kUidOffO,
  kUidOffStats,
  kUidOffDQ,
  kUidOffDKV
};

// One cuDNN graph: every launched entry of one mask kind, as one ragged batch.
struct SdpaGraph {
  SdpaEntryKind kind = SdpaEntryKind::full;
  std::int64_t batch = 0;
  std::int64_t max_q = 0;   // largest q_count (the graph's s_q)
  std::int64_t max_kv = 0;  // largest kv_count (s_kv)
  std::shared_ptr<cudnn_frontend::graph::Graph> graph;
  std::int64_t workspace = 0;  // cuDNN's own workspace bytes
  // Device int32 arrays: seq lengths (batch) and ragged element offsets (batch + 1, the last one the end).
  DeviceArray seq_q, seq_kv, off_q, off_kv, off_o, off_stats, off_dq, off_dkv;
  // Backward: where the graph's dQ, dK and dV scratch rows start in the workspace (bytes). Its entries'
  // scratch rows are contiguous from there in its entry order and the pointers bound for it start there,
  // so its gradient offsets are exact prefix sums of its entries' lengths from 0
  // (SdpaBuildOptions::graph_local_scratch).
  std::size_t dq_offset = 0, dk_offset = 0, dv_offset = 0;
  // Backward with SdpaBuildOptions::packed_inputs: the copies of the caller's rows into the packed
  // buffers (Q rows; O and dO rows; LSE rows; K and V rows), entry by entry.
  bool packed = false;
  RowCopySchedule pack_q, pack_out, pack_stats, pack_kv;
};

// The backward's accumulation of one gradient: the CSR gather map on the device.
struct DeviceGatherMap {
  std::int64_t dest_count = 0;
  DeviceArray dest_rows, first, sources;
};

// The public spec (kernels/cuda_sdpa.hpp), under its old name for this library's code.
using SdpaGraphSpec = cuda::SdpaGraphSpec;

// Constructs the frontend graph for `spec` with the SM version set explicitly (before the SDPA node is
// added: nodes copy the graph's context when they are created) and runs validate(). No device, no handle.
Status make_validated_sdpa_graph(const SdpaGraphSpec& spec, int sm_version,
                                 std::shared_ptr<cudnn_frontend::graph::Graph>& graph);

// make_validated_sdpa_graph with the current device's SM version, then what needs the handle: operation
// graph, heuristic A plans, support check, plan build, workspace query. Plan-time.
Status build_sdpa_graph(cudnnHandle_t handle, const SdpaGraphSpec& spec,
                        std::shared_ptr<cudnn_frontend::graph::Graph>& graph, std::int64_t& workspace);

std::string cudnn_error_text(cudnnStatus_t status);

template <typename T>
Status DeviceArray::upload(const std::vector<T>& host, std::string_view entry, const std::string& name) {
  static_cast<void>(cudaFree(data_));
  data_ = nullptr;
  const std::size_t bytes = std::max<std::size_t>(host.size() * sizeof(T), sizeof(T));  // never a null array
  cudaError_t error = cudaMalloc(&data_, bytes);
  if (error == cudaSuccess && !host.empty())
    error = cudaMemcpy(data_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
  if (error == cudaSuccess) return Status::success();
  return Status::failure(std::string(entry) + ": uploading " + name + " (" + std::to_string(bytes) +
                         " bytes): " + cudaGetErrorString(error) + " (" + cudaGetErrorName(error) + ")");
}

constexpr std::size_t kWorkspaceAlignment = 256;
inline std::size_t align_up(std::size_t bytes) {
  return (bytes + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
}

}  // namespace zb::kernels::cuda::detail

namespace zb::kernels::cuda {

struct SdpaPlan::Impl {
  AttentionShape shape;
  ElementType type = ElementType::bf16;
  bool backward = false;
  cudnnHandle_t handle = nullptr;
  std::vector<detail::SdpaGraph> graphs;  // one per mask kind present (or per entry), bottom-right first

  // Forward: the O/LSE rows that see no key.
  detail::DeviceArray empty_rows;
  std::int64_t empty_row_count = 0;

  // Backward: the compact scratch cuDNN writes dQ/dK/dV into, inside the caller's workspace after
  // cuDNN's own part, and the maps that add it into dQ/dK/dV.
  std::int64_t scratch_q_rows = 0;
  std::int64_t scratch_kv_rows = 0;
  detail::DeviceGatherMap dq_map, dkv_map;  // dK and dV share the kv map

  std::size_t cudnn_workspace = 0;  // max over the graphs (they run one after the other on the stream)
  std::size_t dq_scratch_offset = 0, dk_scratch_offset = 0, dv_scratch_offset = 0;
  // Backward, packed_inputs: the packed buffers (shared by the graphs, which run one after the other).
  std::size_t packed_q_offset = 0, packed_o_offset = 0, packed_do_offset = 0, packed_stats_offset = 0,
              packed_k_offset = 0, packed_v_offset = 0;
  std::size_t workspace_bytes = 0;

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {
    graphs.clear();  // the graphs' plans go before the handle that built them
    if (handle != nullptr) static_cast<void>(cudnnDestroy(handle));
  }
};

}  // namespace zb::kernels::cuda
