// The cudnn-frontend graphs of the SDPA plan: one ragged (THD) batch per mask kind, forward or backward.
// Layout conventions are on kernels/cuda/cudnn_sdpa_impl.hpp.
#include <cmath>
#include <exception>
#include <string>

#include "kernels/cuda/cudnn_sdpa_impl.hpp"

namespace zb::kernels::cuda::detail {

namespace fe = cudnn_frontend;
using TensorPtr = std::shared_ptr<fe::graph::Tensor_attributes>;

std::string cudnn_error_text(cudnnStatus_t status) {
  return std::string(cudnnGetErrorString(status)) + " (status " + std::to_string(static_cast<int>(status)) +
         ")";
}

namespace {

Status frontend_status(fe::error_t error, std::string_view step, const SdpaGraphSpec& spec) {
  if (error.is_good()) return Status::success();
  const char* kind = sdpa_kind_name(spec.kind);
  return Status::failure("SdpaPlan::build: cudnn-frontend " + std::string(step) + " of the " +
                         (spec.backward ? "backward" : "forward") + " " + kind + " graph (batch " +
                         std::to_string(spec.batch) + ", s_q " + std::to_string(spec.max_q) + ", s_kv " +
                         std::to_string(spec.max_kv) + ", heads " + std::to_string(spec.shape.heads) + "/" +
                         std::to_string(spec.shape.kv_heads) + ", d " + std::to_string(spec.shape.head_dim) +
                         "): " + error.get_message());
}

TensorPtr int32_tensor(fe::graph::Graph& graph, const char* name, std::int64_t uid, std::int64_t count) {
  return graph.tensor(fe::graph::Tensor_attributes()
                          .set_name(name)
                          .set_uid(uid)
                          .set_dim({count, 1, 1, 1})
                          .set_stride({1, 1, 1, 1})
                          .set_data_type(fe::DataType_t::INT32));
}

// THD rows: token stride heads·d, head stride d; batch stride unused (ragged offsets place each entry).
fe::graph::Tensor_attributes thd(const char* name, std::int64_t uid, std::int64_t batch, std::int64_t heads,
                                 std::int64_t seq, std::int64_t dim, const TensorPtr& ragged) {
  return fe::graph::Tensor_attributes()
      .set_name(name)
      .set_uid(uid)
      .set_dim({batch, heads, seq, dim})
      .set_stride({seq * heads * dim, dim, heads * dim, 1})
      .set_ragged_offset(ragged);
}

void set_thd(const TensorPtr& t, std::int64_t uid, std::int64_t batch, std::int64_t heads, std::int64_t seq,
             std::int64_t dim, const TensorPtr& ragged) {
  t->set_output(true)
      .set_uid(uid)
      .set_dim({batch, heads, seq, dim})
      .set_stride({seq * heads * dim, dim, heads * dim, 1})
      .set_ragged_offset(ragged);
}

// Our out_rows × heads fp32 LSE, seen by cuDNN as (b, heads, s, 1) with head stride 1 and token stride heads.
void set_stats_layout(fe::graph::Tensor_attributes& t, std::int64_t batch, std::int64_t heads,
                      std::int64_t seq, const TensorPtr& ragged) {
  t.set_uid(kUidStats)
      .set_dim({batch, heads, seq, 1})
      .set_stride({seq * heads, 1, heads, 1})
      .set_data_type(fe::DataType_t::FLOAT)
      .set_ragged_offset(ragged);
}

template <typename Attributes>
void set_mask(Attributes& attributes, const SdpaGraphSpec& spec, const TensorPtr& seq_q,
              const TensorPtr& seq_kv) {
  // The padding mask carries each entry's true lengths (the dims hold the largest ones).
  attributes.set_padding_mask(true).set_seq_len_q(seq_q).set_seq_len_kv(seq_kv);
  if (spec.kind == SdpaEntryKind::bottom_right_causal)
    attributes.set_diagonal_alignment(fe::DiagonalAlignment_t::BOTTOM_RIGHT).set_diagonal_band_right_bound(0);
  // Square entries: top-left and bottom-right are the same mask, and top-left is the fast backward path.
  if (spec.kind == SdpaEntryKind::square_causal)
    attributes.set_diagonal_alignment(fe::DiagonalAlignment_t::TOP_LEFT).set_diagonal_band_right_bound(0);
}

}  // namespace

Status make_validated_sdpa_graph(const SdpaGraphSpec& spec, int sm_version,
                                 std::shared_ptr<fe::graph::Graph>& out) {
  if (spec.kind == SdpaEntryKind::empty || spec.batch <= 0 || spec.max_q <= 0 || spec.max_kv <= 0 ||
      spec.shape.heads <= 0 || spec.shape.kv_heads <= 0 || spec.shape.head_dim <= 0)
    return Status::failure("SdpaPlan::build: no cuDNN graph for an empty kind, batch, length or head count");
  if (spec.type != ElementType::bf16 && spec.type != ElementType::f16)
    return Status::failure("SdpaPlan::build: input_type must be bf16 or f16 (cuDNN SDPA has no f32 path)");
  const std::int64_t b = spec.batch, sq = spec.max_q, skv = spec.max_kv;
  const std::int64_t h = spec.shape.heads, hk = spec.shape.kv_heads, d = spec.shape.head_dim;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  auto graph = std::make_shared<fe::graph::Graph>();
  // The SM version decides which of cudnn-frontend's support rules apply (head dims per architecture, THD
  // on Hopper and later); set here it is what validate() checks, instead of the current device's, and it
  // must come before graph->sdpa(): each node copies the graph's context when it is created.
  graph->set_sm_version(sm_version);
  graph->set_io_data_type(spec.type == ElementType::bf16 ? fe::DataType_t::BFLOAT16 : fe::DataType_t::HALF)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);

  // graph->sdpa() picks cuDNN's implementation when the node is added and throws when none fits; the
  // frontend's other steps return error_t. Both become the same Status.
  try {
    const TensorPtr seq_q = int32_tensor(*graph, "seq_len_q", kUidSeqQ, b);
    const TensorPtr seq_kv = int32_tensor(*graph, "seq_len_kv", kUidSeqKV, b);
    const TensorPtr off_q = int32_tensor(*graph, "offset_q", kUidOffQ, b + 1);
    const TensorPtr off_kv = int32_tensor(*graph, "offset_kv", kUidOffKV, b + 1);
    const TensorPtr off_o = int32_tensor(*graph, "offset_o", kUidOffO, b + 1);
    const TensorPtr off_stats = int32_tensor(*graph, "offset_stats", kUidOffStats, b + 1);
    const TensorPtr q = graph->tensor(thd("Q", kUidQ, b, h, sq, d, off_q));
    const TensorPtr k = graph->tensor(thd("K", kUidK, b, hk, skv, d, off_kv));
    const TensorPtr v = graph->tensor(thd("V", kUidV, b, hk, skv, d, off_kv));

    if (!spec.backward) {
      auto attributes = fe::graph::SDPA_attributes()
                            .set_name("sdpa_forward")
                            .set_generate_stats(true)
                            .set_attn_scale(scale);
      set_mask(attributes, spec, seq_q, seq_kv);
      auto [o, stats] = graph->sdpa(q, k, v, attributes);
      set_thd(o, kUidO, b, h, sq, d, off_o);
      stats->set_output(true);
      set_stats_layout(*stats, b, h, sq, off_stats);
    } else {
      const TensorPtr off_dq = int32_tensor(*graph, "offset_dq", kUidOffDQ, b + 1);
      const TensorPtr off_dkv = int32_tensor(*graph, "offset_dkv", kUidOffDKV, b + 1);
      const TensorPtr o = graph->tensor(thd("O", kUidO, b, h, sq, d, off_o));
      const TensorPtr d_o = graph->tensor(thd("dO", kUidDO, b, h, sq, d, off_o));
      fe::graph::Tensor_attributes stats_attributes;
      stats_attributes.set_name("Stats");
      set_stats_layout(stats_attributes, b, h, sq, off_stats);
      const TensorPtr stats = graph->tensor(stats_attributes);
      // With max_total_seq_len set, cuDNN sizes its fp32 dQ accumulator and softmax-sum workspace by the
      // packed token totals and indexes them with the dQ and Stats ragged offsets (ours point into the
      // compact scratch and into out_rows), instead of dense b × max s_q, which for one long entry among
      // many short ones would be batch times too large. The totals cover every row an offset can name.
      auto attributes = fe::graph::SDPA_backward_attributes().set_name("sdpa_backward").set_attn_scale(scale);
      if (spec.ragged_accumulators)
        attributes.set_max_total_seq_len_q(spec.total_q).set_max_total_seq_len_kv(spec.total_kv);
      set_mask(attributes, spec, seq_q, seq_kv);
      auto [dq, dk, dv] = graph->sdpa_backward(q, k, v, o, d_o, stats, attributes);
      set_thd(dq, kUidDQ, b, h, sq, d, off_dq);
      set_thd(dk, kUidDK, b, hk, skv, d, off_dkv);
      set_thd(dv, kUidDV, b, hk, skv, d, off_dkv);
    }
    if (Status s =
            frontend_status(graph->validate(), "validate (SM " + std::to_string(sm_version) + ")", spec);
        !s)
      return s;
  } catch (const std::exception& e) {
    return frontend_status({fe::error_code_t::GRAPH_NOT_SUPPORTED, e.what()},
                           "graph construction (SM " + std::to_string(sm_version) + ")", spec);
  }
  out = std::move(graph);
  return Status::success();
}

Status build_sdpa_graph(cudnnHandle_t handle, const SdpaGraphSpec& spec,
                        std::shared_ptr<fe::graph::Graph>& out, std::int64_t& workspace) {
  // The handle's device is the current one (cudnnCreate binds it), so its SM version is the one to check.
  int device = 0, major = 0, minor = 0;
  for (cudaError_t error :
       {cudaGetDevice(&device), cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device)}) {
    if (error != cudaSuccess)
      return Status::failure(std::string("SdpaPlan::build: reading the device's compute capability: ") +
                             cudaGetErrorString(error));
  }
  std::shared_ptr<fe::graph::Graph> graph;
  if (Status s = make_validated_sdpa_graph(spec, major * 10 + minor, graph); !s) return s;
  if (Status s = frontend_status(graph->build_operation_graph(handle), "build_operation_graph", spec); !s)
    return s;
  if (Status s =
          frontend_status(graph->create_execution_plans({fe::HeurMode_t::A}), "create_execution_plans", spec);
      !s)
    return s;
  if (Status s = frontend_status(graph->check_support(handle), "check_support", spec); !s) return s;
  if (Status s = frontend_status(graph->build_plans(handle), "build_plans", spec); !s) return s;
  if (Status s = frontend_status(graph->get_workspace_size(workspace), "get_workspace_size", spec); !s)
    return s;
  out = std::move(graph);
  return Status::success();
}

}  // namespace zb::kernels::cuda::detail

namespace zb::kernels::cuda {

Status validate_sdpa_graph(const SdpaGraphSpec& spec, int sm_version) {
  std::shared_ptr<cudnn_frontend::graph::Graph> graph;
  return detail::make_validated_sdpa_graph(spec, sm_version, graph);
}

}  // namespace zb::kernels::cuda
