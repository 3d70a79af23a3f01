// sdpa_forward and sdpa_backward (kernels/cuda_sdpa.hpp): bind the caller's pointers and the plan's
// device tables to each graph and execute on the stream. No allocation, no synchronisation: the graphs,
// tables and workspace layout were fixed by SdpaPlan::build.
#include <string>
#include <unordered_map>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cudnn_sdpa_impl.hpp"
#include "kernels/cuda/sdpa_rows.hpp"

namespace zb::kernels::cuda {

using detail::SdpaGraph;

namespace {

using VariantPack = std::unordered_map<std::int64_t, void*>;

// cuDNN reads with 16-byte vector accesses; cudaMalloc gives 256.
Status check_pointers(std::string_view entry,
                      std::initializer_list<std::pair<const char*, const void*>> pointers) {
  for (const auto& [name, pointer] : pointers) {
    if (Status s = detail::check_aligned(entry, name, pointer, 16); !s) return s;
  }
  return Status::success();
}

const SdpaPlan::Impl* usable_plan(const SdpaPlan& plan, std::string_view entry, bool backward,
                                  Status& error) {
  const SdpaPlan::Impl* p = plan.impl();
  if (p == nullptr) {
    error = Status::failure(std::string(entry) + ": the plan was moved from");
  } else if (p->handle == nullptr) {
    error =
        Status::failure(std::string(entry) + ": the plan was not built (SdpaPlan::build did not succeed)");
  } else if (p->backward != backward) {
    error = Status::failure(std::string(entry) + ": the plan was built for the " +
                            (p->backward ? "backward" : "forward") + " (SdpaPlan::build's `backward`)");
  }
  return error ? p : nullptr;
}

Status check_workspace(std::string_view entry, const SdpaPlan::Impl& p, const void* workspace) {
  if (p.workspace_bytes == 0) return Status::success();
  return detail::check_aligned(entry, "workspace", workspace, detail::kWorkspaceAlignment);
}

void bind_tables(const SdpaGraph& g, VariantPack& pack) {
  pack[detail::kUidSeqQ] = g.seq_q.as<void>();
  pack[detail::kUidSeqKV] = g.seq_kv.as<void>();
  pack[detail::kUidOffQ] = g.off_q.as<void>();
  pack[detail::kUidOffKV] = g.off_kv.as<void>();
  pack[detail::kUidOffO] = g.off_o.as<void>();
  pack[detail::kUidOffStats] = g.off_stats.as<void>();
}

Status execute(const SdpaPlan::Impl& p, const SdpaGraph& g, VariantPack& pack, void* workspace,
               std::string_view entry) {
  auto error = g.graph->execute(p.handle, pack, workspace);
  if (error.is_good()) return Status::success();
  return Status::failure(std::string(entry) + ": cudnn-frontend execute of the " + sdpa_kind_name(g.kind) +
                         " graph (batch " + std::to_string(g.batch) + "): " + error.get_message());
}

Status set_stream(const SdpaPlan::Impl& p, Stream stream, std::string_view entry) {
  const cudnnStatus_t status = cudnnSetStream(p.handle, stream);
  if (status == CUDNN_STATUS_SUCCESS) return Status::success();
  return Status::failure(std::string(entry) + ": cudnnSetStream: " + detail::cudnn_error_text(status));
}

}  // namespace

Status sdpa_forward(const SdpaPlan& plan, const SdpaForwardTensors& t, Stream stream) {
  constexpr std::string_view entry = "sdpa_forward";
  Status error;
  const SdpaPlan::Impl* p = usable_plan(plan, entry, false, error);
  if (p == nullptr) return error;
  if (p->graphs.empty() && p->empty_row_count == 0) return Status::success();
  if (Status s = check_pointers(entry, {{"o", t.o}, {"lse", t.lse}}); !s) return s;
  if (!p->graphs.empty()) {
    if (Status s = check_pointers(entry, {{"q", t.q}, {"k", t.k}, {"v", t.v}}); !s) return s;
    if (Status s = check_workspace(entry, *p, t.workspace); !s) return s;
    if (Status s = set_stream(*p, stream, entry); !s) return s;
  }
  for (const SdpaGraph& g : p->graphs) {
    VariantPack pack{{detail::kUidQ, const_cast<void*>(t.q)},
                     {detail::kUidK, const_cast<void*>(t.k)},
                     {detail::kUidV, const_cast<void*>(t.v)},
                     {detail::kUidO, t.o},
                     {detail::kUidStats, t.lse}};
    bind_tables(g, pack);
    if (Status s = execute(*p, g, pack, t.workspace, entry); !s) return s;
  }
  return detail::fill_empty_rows(p->empty_rows.as<const std::int64_t>(), p->empty_row_count, p->shape.heads,
                                 p->shape.head_dim, p->type, t.o, t.lse, stream);
}

Status sdpa_backward(const SdpaPlan& plan, const SdpaBackwardTensors& t, Stream stream) {
  constexpr std::string_view entry = "sdpa_backward";
  Status error;
  const SdpaPlan::Impl* p = usable_plan(plan, entry, true, error);
  if (p == nullptr) return error;
  if (p->graphs.empty()) return Status::success();  // every row saw no key: nothing to add
  if (Status s = check_pointers(entry, {{"q", t.q},
                                        {"k", t.k},
                                        {"v", t.v},
                                        {"o", t.o},
                                        {"d_o", t.d_o},
                                        {"lse", t.lse},
                                        {"dq", t.dq},
                                        {"dk", t.dk},
                                        {"dv", t.dv}});
      !s)
    return s;
  if (Status s = check_workspace(entry, *p, t.workspace); !s) return s;
  if (Status s = set_stream(*p, stream, entry); !s) return s;
  auto* base = static_cast<unsigned char*>(t.workspace);
  void* dq_scratch = base + p->dq_scratch_offset;
  void* dk_scratch = base + p->dk_scratch_offset;
  void* dv_scratch = base + p->dv_scratch_offset;
  // cuDNN writes every launched entry's gradients into its own scratch rows, then the gather adds them
  // into dQ/dK/dV in list order (exact accumulation, nothing to zero in the scratch).
  for (const SdpaGraph& g : p->graphs) {
    // Packed inputs: the graph's rows copied into contiguous buffers in entry order first (stream order
    // keeps the previous graph's call done with the shared buffers before they are overwritten).
    const void *q = t.q, *k = t.k, *v = t.v, *o = t.o, *d_o = t.d_o;
    const float* lse = t.lse;
    if (g.packed) {
      void* packed_q = base + p->packed_q_offset;
      void* packed_o = base + p->packed_o_offset;
      void* packed_do = base + p->packed_do_offset;
      void* packed_lse = base + p->packed_stats_offset;
      void* packed_k = base + p->packed_k_offset;
      void* packed_v = base + p->packed_v_offset;
      for (Status s :
           {pack_rows(g.pack_q, t.q, packed_q, stream), pack_rows(g.pack_out, t.o, packed_o, stream),
            pack_rows(g.pack_out, t.d_o, packed_do, stream),
            pack_rows(g.pack_stats, t.lse, packed_lse, stream), pack_rows(g.pack_kv, t.k, packed_k, stream),
            pack_rows(g.pack_kv, t.v, packed_v, stream)}) {
        if (!s) return Status::failure(std::string(entry) + ": packing the inputs: " + s.message());
      }
      q = packed_q, k = packed_k, v = packed_v, o = packed_o, d_o = packed_do;
      lse = static_cast<const float*>(packed_lse);
    }
    VariantPack pack{{detail::kUidQ, const_cast<void*>(q)},    {detail::kUidK, const_cast<void*>(k)},
                     {detail::kUidV, const_cast<void*>(v)},    {detail::kUidO, const_cast<void*>(o)},
                     {detail::kUidDO, const_cast<void*>(d_o)}, {detail::kUidStats, const_cast<float*>(lse)},
                     {detail::kUidDQ, base + g.dq_offset},  // the graph's own part of the scratch
                     {detail::kUidDK, base + g.dk_offset},     {detail::kUidDV, base + g.dv_offset},
                     {detail::kUidOffDQ, g.off_dq.as<void>()}, {detail::kUidOffDKV, g.off_dkv.as<void>()}};
    bind_tables(g, pack);
    if (Status s = execute(*p, g, pack, t.workspace, entry); !s) return s;
  }
  const std::int64_t q_elements = static_cast<std::int64_t>(p->shape.heads) * p->shape.head_dim;
  const std::int64_t kv_elements = static_cast<std::int64_t>(p->shape.kv_heads) * p->shape.head_dim;
  const auto gather = [&](const detail::DeviceGatherMap& map, std::int64_t row_elements, const void* scratch,
                          void* dest) {
    return detail::gather_add_rows(map.dest_rows.as<const std::int64_t>(), map.first.as<const std::int64_t>(),
                                   map.sources.as<const std::int64_t>(), map.dest_count, row_elements,
                                   p->type, scratch, dest, stream);
  };
  if (Status s = gather(p->dq_map, q_elements, dq_scratch, t.dq); !s) return s;
  if (Status s = gather(p->dkv_map, kv_elements, dk_scratch, t.dk); !s) return s;
  return gather(p->dkv_map, kv_elements, dv_scratch, t.dv);
}

}  // namespace zb::kernels::cuda
