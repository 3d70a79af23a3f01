// SdpaPlan::build and cudnn_sdpa_available (kernels/cuda_sdpa.hpp): split the blocks into cuDNN entries
// (kernels/sdpa_blocks.hpp), upload each mask kind's lengths and ragged offsets, build its graph, lay out
// the workspace. Everything synchronous happens here, none of it in the launches.
#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cuda/cudnn_sdpa_impl.hpp"

namespace zb::kernels::cuda {

using detail::DeviceArray;
using detail::SdpaGraph;

namespace {

constexpr std::string_view kEntry = "SdpaPlan::build";
constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();

Status upload_int32(DeviceArray& array, const std::vector<std::int64_t>& values, const std::string& name) {
  std::vector<std::int32_t> narrow;
  narrow.reserve(values.size());
  for (std::int64_t v : values) {
    if (v > kInt32Max)  // split_sdpa_blocks checked the tensors; scratch offsets are checked here
      return Status::failure(std::string(kEntry) + ": " + name + " value " + std::to_string(v) +
                             " exceeds cuDNN's int32 ragged offsets");
    narrow.push_back(static_cast<std::int32_t>(v));
  }
  return array.upload(narrow, kEntry, name);
}

// Offsets of `count` rows of `row_elements` starting at `rows[i]`, plus the end of the furthest one.
std::vector<std::int64_t> ragged(const std::vector<std::int64_t>& rows,
                                 const std::vector<std::int64_t>& counts, std::int64_t row_elements) {
  std::vector<std::int64_t> offsets;
  std::int64_t end = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    offsets.push_back(rows[i] * row_elements);
    end = std::max(end, (rows[i] + counts[i]) * row_elements);
  }
  offsets.push_back(end);
  return offsets;
}

// The entries of one kind as one graph; `scratch_q` / `scratch_kv` are each entry's scratch rows (backward).
Status build_kind(cudnnHandle_t handle, const SdpaPlan::Impl& plan, SdpaEntryKind kind,
                  const std::vector<SdpaEntry>& entries, const std::vector<std::int64_t>& scratch_q,
                  const std::vector<std::int64_t>& scratch_kv, SdpaGraph& g) {
  std::vector<std::int64_t> q_rows, kv_rows, out_rows, q_counts, kv_counts, dq_rows, dkv_rows;
  for (std::size_t e = 0; e < entries.size(); ++e) {
    if (entries[e].kind != kind) continue;
    q_rows.push_back(entries[e].q_row);
    kv_rows.push_back(entries[e].kv_row);
    out_rows.push_back(entries[e].out_row);
    q_counts.push_back(entries[e].q_count);
    kv_counts.push_back(entries[e].kv_count);
    if (plan.backward) {
      dq_rows.push_back(scratch_q[e]);
      dkv_rows.push_back(scratch_kv[e]);
    }
  }
  const AttentionShape& shape = plan.shape;
  const std::int64_t q_elements = static_cast<std::int64_t>(shape.heads) * shape.head_dim;
  const std::int64_t kv_elements = static_cast<std::int64_t>(shape.kv_heads) * shape.head_dim;
  g.kind = kind;
  g.batch = static_cast<std::int64_t>(q_rows.size());
  g.max_q = *std::max_element(q_counts.begin(), q_counts.end());
  g.max_kv = *std::max_element(kv_counts.begin(), kv_counts.end());
  for (Status s :
       {upload_int32(g.seq_q, q_counts, "seq_len_q"), upload_int32(g.seq_kv, kv_counts, "seq_len_kv"),
        upload_int32(g.off_q, ragged(q_rows, q_counts, q_elements), "Q ragged offsets"),
        upload_int32(g.off_kv, ragged(kv_rows, kv_counts, kv_elements), "K/V ragged offsets"),
        upload_int32(g.off_o, ragged(out_rows, q_counts, q_elements), "O ragged offsets"),
        upload_int32(g.off_stats, ragged(out_rows, q_counts, shape.heads), "LSE ragged offsets")}) {
    if (!s) return s;
  }
  detail::SdpaGraphSpec spec{kind, shape, plan.type, plan.backward, g.batch, g.max_q, g.max_kv, 0, 0};
  if (plan.backward) {
    if (Status s = upload_int32(g.off_dq, ragged(dq_rows, q_counts, q_elements), "dQ scratch offsets"); !s)
      return s;
    if (Status s = upload_int32(g.off_dkv, ragged(dkv_rows, kv_counts, kv_elements), "dK/dV scratch offsets");
        !s)
      return s;
    spec.total_q = std::max({shape.q_tokens, shape.out_rows, plan.scratch_q_rows});
    spec.total_kv = std::max(shape.kv_tokens, plan.scratch_kv_rows);
  }
  return detail::build_sdpa_graph(handle, spec, g.graph, g.workspace);
}

Status upload_gather(detail::DeviceGatherMap& device, const SdpaGatherMap& map, const std::string& name) {
  device.dest_count = static_cast<std::int64_t>(map.dest_rows.size());
  for (Status s : {device.dest_rows.upload(map.dest_rows, kEntry, name + " destination rows"),
                   device.first.upload(map.first, kEntry, name + " row starts"),
                   device.sources.upload(map.sources, kEntry, name + " scratch rows")}) {
    if (!s) return s;
  }
  return Status::success();
}

}  // namespace

Status cudnn_sdpa_available() {
  if (Status s = device_available(); !s) return s;
  const std::size_t version = cudnnGetVersion();
  // Ragged Stats and bottom-right causal masks with any lengths need cuDNN 9.6 (cudnn-frontend's checks).
  if (version < 90600)
    return Status::failure("cuDNN SDPA unavailable: libcudnn reports version " + std::to_string(version) +
                           ", 9.6.0 or newer is needed");
  cudnnHandle_t handle = nullptr;
  const cudnnStatus_t created = cudnnCreate(&handle);
  if (created != CUDNN_STATUS_SUCCESS)
    return Status::failure("cuDNN SDPA unavailable: cudnnCreate: " + detail::cudnn_error_text(created));
  static_cast<void>(cudnnDestroy(handle));
  return Status::success();
}

SdpaPlan::SdpaPlan() : impl_(std::make_unique<Impl>()) {}
SdpaPlan::~SdpaPlan() = default;
SdpaPlan::SdpaPlan(SdpaPlan&&) noexcept = default;
SdpaPlan& SdpaPlan::operator=(SdpaPlan&&) noexcept = default;
std::size_t SdpaPlan::workspace_bytes() const noexcept {
  return impl_ ? impl_->workspace_bytes : 0;
}
const AttentionShape& SdpaPlan::shape() const noexcept {
  static const AttentionShape moved_from{};
  return impl_ ? impl_->shape : moved_from;
}

Status SdpaPlan::build(const AttentionShape& shape, std::span<const AttentionBlockDesc> blocks,
                       ElementType input_type, bool backward) {
  if (input_type != ElementType::bf16 && input_type != ElementType::f16)
    return Status::failure(std::string(kEntry) +
                           ": input_type must be bf16 or f16 (cuDNN SDPA has no f32 path)");
  std::vector<SdpaEntry> entries;
  if (Status s = split_sdpa_blocks(kEntry, shape, blocks, backward, entries); !s) return s;

  auto fresh = std::make_unique<Impl>();
  fresh->shape = shape;
  fresh->type = input_type;
  fresh->backward = backward;
  if (const cudnnStatus_t status = cudnnCreate(&fresh->handle); status != CUDNN_STATUS_SUCCESS)
    return Status::failure(std::string(kEntry) + ": cudnnCreate: " + detail::cudnn_error_text(status));

  // Scratch rows in list order (backward), and the forward's rows that see no key.
  std::vector<std::int64_t> scratch_q(entries.size(), 0), scratch_kv(entries.size(), 0), empty_rows;
  std::vector<std::int64_t> dq_dest, dq_count, dkv_dest, dkv_count, dq_source, dkv_source;
  bool has_kind[2] = {false, false};
  for (std::size_t e = 0; e < entries.size(); ++e) {
    const SdpaEntry& entry = entries[e];
    if (entry.kind == SdpaEntryKind::empty) {
      for (std::int64_t r = 0; r < entry.q_count; ++r) empty_rows.push_back(entry.out_row + r);
      continue;
    }
    has_kind[entry.kind == SdpaEntryKind::full ? 1 : 0] = true;
    scratch_q[e] = fresh->scratch_q_rows;
    scratch_kv[e] = fresh->scratch_kv_rows;
    fresh->scratch_q_rows += entry.q_count;
    fresh->scratch_kv_rows += entry.kv_count;
    dq_dest.push_back(entry.q_row);
    dq_count.push_back(entry.q_count);
    dq_source.push_back(scratch_q[e]);
    dkv_dest.push_back(entry.kv_row);
    dkv_count.push_back(entry.kv_count);
    dkv_source.push_back(scratch_kv[e]);
  }
  if (!backward) {
    fresh->scratch_q_rows = fresh->scratch_kv_rows = 0;
    fresh->empty_row_count = static_cast<std::int64_t>(empty_rows.size());
    if (Status s = fresh->empty_rows.upload(empty_rows, kEntry, "empty rows"); !s) return s;
  }
  for (SdpaEntryKind kind : {SdpaEntryKind::bottom_right_causal, SdpaEntryKind::full}) {
    if (!has_kind[kind == SdpaEntryKind::full ? 1 : 0]) continue;
    fresh->graphs.emplace_back();
    if (Status s =
            build_kind(fresh->handle, *fresh, kind, entries, scratch_q, scratch_kv, fresh->graphs.back());
        !s)
      return s;
    fresh->cudnn_workspace =
        std::max(fresh->cudnn_workspace, static_cast<std::size_t>(fresh->graphs.back().workspace));
  }
  if (backward) {
    if (Status s = upload_gather(fresh->dq_map, build_gather_map(dq_dest, dq_count, dq_source), "dQ map"); !s)
      return s;
    if (Status s =
            upload_gather(fresh->dkv_map, build_gather_map(dkv_dest, dkv_count, dkv_source), "dK/dV map");
        !s)
      return s;
  }
  // Workspace: [cuDNN's | dQ scratch | dK scratch | dV scratch], each part 256-byte aligned.
  const std::size_t element = 2;  // bf16 and f16
  const std::size_t q_row_bytes = static_cast<std::size_t>(shape.heads) * shape.head_dim * element;
  const std::size_t kv_row_bytes = static_cast<std::size_t>(shape.kv_heads) * shape.head_dim * element;
  fresh->dq_scratch_offset = detail::align_up(fresh->cudnn_workspace);
  fresh->dk_scratch_offset = fresh->dq_scratch_offset +
                             detail::align_up(static_cast<std::size_t>(fresh->scratch_q_rows) * q_row_bytes);
  fresh->dv_scratch_offset =
      fresh->dk_scratch_offset +
      detail::align_up(static_cast<std::size_t>(fresh->scratch_kv_rows) * kv_row_bytes);
  fresh->workspace_bytes =
      backward ? fresh->dv_scratch_offset +
                     detail::align_up(static_cast<std::size_t>(fresh->scratch_kv_rows) * kv_row_bytes)
               : fresh->cudnn_workspace;
  impl_ = std::move(fresh);
  return Status::success();
}

}  // namespace zb::kernels::cuda
