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
using detail::SdpaGraphSpec;

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

// One graph's members (the launched entries of one kind, or one entry) and the spec cuDNN sees: host
// values only, so validate_sdpa_plan derives exactly what build() uploads and builds.
using GraphLayout = SdpaGraphRows;

// Everything build() decides before it touches the device.
struct PlanLayout {
  std::vector<SdpaEntry> entries;
  std::vector<std::int64_t> empty_rows;  // forward: O/LSE rows that see no key
  std::int64_t scratch_q_rows = 0, scratch_kv_rows = 0;
  std::vector<std::int64_t> dq_dest, dq_count, dq_source, dkv_dest, dkv_count, dkv_source;
  std::vector<GraphLayout> graphs;  // bottom-right first, then full
};

// The entries `members` (indices into layout.entries) as one graph of `kind`.
GraphLayout lay_out_graph(const PlanLayout& layout, const AttentionShape& shape, ElementType type,
                          bool backward, SdpaEntryKind kind, const std::vector<std::size_t>& members,
                          const std::vector<std::int64_t>& scratch_q,
                          const std::vector<std::int64_t>& scratch_kv, const SdpaBuildOptions& options) {
  GraphLayout g;
  if (backward && options.graph_local_scratch) {
    // The members' scratch rows are contiguous from the first one's (lay_out_plan), and the pointers
    // bound for this graph start there: its gradient offsets are the prefix sums of its lengths from 0.
    g.scratch_q_base = scratch_q[members.front()];
    g.scratch_kv_base = scratch_kv[members.front()];
  }
  for (std::size_t e : members) {
    const SdpaEntry& entry = layout.entries[e];
    g.q_rows.push_back(entry.q_row);
    g.kv_rows.push_back(entry.kv_row);
    g.out_rows.push_back(entry.out_row);
    g.q_counts.push_back(entry.q_count);
    g.kv_counts.push_back(entry.kv_count);
    if (backward) {
      g.dq_rows.push_back(scratch_q[e] - g.scratch_q_base);
      g.dkv_rows.push_back(scratch_kv[e] - g.scratch_kv_base);
    }
  }
  if (backward && options.packed_inputs) {
    // The packed buffers hold the members' rows one after the other: every offset is a prefix sum from 0.
    g.packed = true;
    g.source_q_rows = std::exchange(g.q_rows, {});
    g.source_kv_rows = std::exchange(g.kv_rows, {});
    g.source_out_rows = std::exchange(g.out_rows, {});
    std::int64_t q = 0, kv = 0;
    for (std::size_t i = 0; i < members.size(); ++i) {
      g.q_rows.push_back(q);
      g.out_rows.push_back(q);
      g.kv_rows.push_back(kv);
      q += g.q_counts[i];
      kv += g.kv_counts[i];
    }
  }
  g.spec.kind = kind;
  g.spec.shape = shape;
  g.spec.type = type;
  g.spec.backward = backward;
  g.spec.batch = static_cast<std::int64_t>(members.size());
  g.spec.max_q = *std::max_element(g.q_counts.begin(), g.q_counts.end());
  g.spec.max_kv = *std::max_element(g.kv_counts.begin(), g.kv_counts.end());
  g.spec.ragged_accumulators = options.ragged_accumulators;
  if (backward) {
    g.spec.total_q = std::max({shape.q_tokens, shape.out_rows, layout.scratch_q_rows});
    g.spec.total_kv = std::max(shape.kv_tokens, layout.scratch_kv_rows);
  }
  return g;
}

// Validates and splits the blocks, assigns scratch rows (backward) and groups the entries into graphs.
Status lay_out_plan(const AttentionShape& shape, std::span<const AttentionBlockDesc> blocks, ElementType type,
                    bool backward, const SdpaBuildOptions& options, PlanLayout& layout) {
  if (type != ElementType::bf16 && type != ElementType::f16)
    return Status::failure(std::string(kEntry) +
                           ": input_type must be bf16 or f16 (cuDNN SDPA has no f32 path)");
  if (Status s = split_sdpa_blocks(kEntry, shape, blocks, backward, layout.entries); !s) return s;
  // Square bottom-right entries go top-left (SdpaBuildOptions::square_top_left), unless every one is
  // 1 x 1: cuDNN's backward refuses a graph whose s_q = s_kv = 1, and those ride along with the longer
  // bottom-right entries instead, as before.
  const auto square = [](const SdpaEntry& e) {
    return e.kind == SdpaEntryKind::bottom_right_causal && e.q_count == e.kv_count;
  };
  if (options.square_top_left &&
      std::ranges::any_of(layout.entries, [&](const SdpaEntry& e) { return square(e) && e.q_count > 1; }))
    for (SdpaEntry& entry : layout.entries)
      if (square(entry)) entry.kind = SdpaEntryKind::square_causal;
  const std::vector<SdpaEntry>& entries = layout.entries;
  // The launched kinds, one graph each (or one per entry), in this order.
  constexpr SdpaEntryKind kLaunched[] = {SdpaEntryKind::square_causal, SdpaEntryKind::bottom_right_causal,
                                         SdpaEntryKind::full};
  // The forward's rows that see no key.
  std::vector<std::int64_t> scratch_q(entries.size(), 0), scratch_kv(entries.size(), 0);
  for (const SdpaEntry& entry : entries)
    if (entry.kind == SdpaEntryKind::empty)
      for (std::int64_t r = 0; r < entry.q_count; ++r) layout.empty_rows.push_back(entry.out_row + r);
  // Scratch rows (backward): graph by graph (square entries in list order, then bottom-right, then full), so
  // that each graph's rows are contiguous (graph_local_scratch); or in list order across graphs.
  const auto assign_scratch = [&](std::size_t e) {
    scratch_q[e] = layout.scratch_q_rows;
    scratch_kv[e] = layout.scratch_kv_rows;
    layout.scratch_q_rows += entries[e].q_count;
    layout.scratch_kv_rows += entries[e].kv_count;
  };
  if (options.graph_local_scratch) {
    for (SdpaEntryKind kind : kLaunched)
      for (std::size_t e = 0; e < entries.size(); ++e)
        if (entries[e].kind == kind) assign_scratch(e);
  } else {
    for (std::size_t e = 0; e < entries.size(); ++e)
      if (entries[e].kind != SdpaEntryKind::empty) assign_scratch(e);
  }
  // The gathers add each entry's scratch rows into dQ/dK/dV in list order (the accumulation order the
  // plan's blocks give), whatever the scratch layout.
  for (std::size_t e = 0; e < entries.size(); ++e) {
    const SdpaEntry& entry = entries[e];
    if (entry.kind == SdpaEntryKind::empty) continue;
    layout.dq_dest.push_back(entry.q_row);
    layout.dq_count.push_back(entry.q_count);
    layout.dq_source.push_back(scratch_q[e]);
    layout.dkv_dest.push_back(entry.kv_row);
    layout.dkv_count.push_back(entry.kv_count);
    layout.dkv_source.push_back(scratch_kv[e]);
  }
  if (!backward) layout.scratch_q_rows = layout.scratch_kv_rows = 0;
  for (SdpaEntryKind kind : kLaunched) {
    std::vector<std::size_t> members;
    for (std::size_t e = 0; e < entries.size(); ++e) {
      if (entries[e].kind != kind) continue;
      if (options.one_entry_per_graph)
        layout.graphs.push_back(
            lay_out_graph(layout, shape, type, backward, kind, {e}, scratch_q, scratch_kv, options));
      else
        members.push_back(e);
    }
    if (!members.empty())
      layout.graphs.push_back(
          lay_out_graph(layout, shape, type, backward, kind, members, scratch_q, scratch_kv, options));
  }
  return Status::success();
}

std::string describe_graph(const SdpaGraphSpec& spec) {
  return std::string(spec.backward ? "backward " : "forward ") + sdpa_kind_name(spec.kind) + " batch " +
         std::to_string(spec.batch) + " s_q " + std::to_string(spec.max_q) + " s_kv " +
         std::to_string(spec.max_kv) + " heads " + std::to_string(spec.shape.heads) + "/" +
         std::to_string(spec.shape.kv_heads) + " d " + std::to_string(spec.shape.head_dim) +
         (spec.type == ElementType::bf16 ? " bf16" : " f16") +
         (spec.backward
              ? " total_q " + std::to_string(spec.total_q) + " total_kv " + std::to_string(spec.total_kv)
              : std::string());
}

// Uploads one graph's lengths and ragged offsets and builds its cuDNN graph.
Status build_graph(cudnnHandle_t handle, const GraphLayout& layout, SdpaGraph& g) {
  const SdpaGraphSpec& spec = layout.spec;
  const AttentionShape& shape = spec.shape;
  const std::int64_t q_elements = static_cast<std::int64_t>(shape.heads) * shape.head_dim;
  const std::int64_t kv_elements = static_cast<std::int64_t>(shape.kv_heads) * shape.head_dim;
  g.kind = spec.kind;
  g.batch = spec.batch;
  g.max_q = spec.max_q;
  g.max_kv = spec.max_kv;
  for (Status s :
       {upload_int32(g.seq_q, layout.q_counts, "seq_len_q"),
        upload_int32(g.seq_kv, layout.kv_counts, "seq_len_kv"),
        upload_int32(g.off_q, ragged(layout.q_rows, layout.q_counts, q_elements), "Q ragged offsets"),
        upload_int32(g.off_kv, ragged(layout.kv_rows, layout.kv_counts, kv_elements), "K/V ragged offsets"),
        upload_int32(g.off_o, ragged(layout.out_rows, layout.q_counts, q_elements), "O ragged offsets"),
        upload_int32(g.off_stats, ragged(layout.out_rows, layout.q_counts, shape.heads),
                     "LSE ragged offsets")}) {
    if (!s) return s;
  }
  if (layout.packed) {
    const auto runs = [](const std::vector<std::int64_t>& rows, const std::vector<std::int64_t>& counts) {
      std::vector<RowRange> out;
      for (std::size_t i = 0; i < rows.size(); ++i) out.push_back({rows[i], counts[i]});
      return out;
    };
    const std::size_t element = 2;  // bf16 and f16
    g.packed = true;
    for (Status s :
         {g.pack_q.build(runs(layout.source_q_rows, layout.q_counts),
                         static_cast<std::size_t>(q_elements) * element, shape.q_tokens, false),
          g.pack_out.build(runs(layout.source_out_rows, layout.q_counts),
                           static_cast<std::size_t>(q_elements) * element, shape.out_rows, false),
          g.pack_stats.build(runs(layout.source_out_rows, layout.q_counts),
                             static_cast<std::size_t>(shape.heads) * sizeof(float), shape.out_rows, false),
          g.pack_kv.build(runs(layout.source_kv_rows, layout.kv_counts),
                          static_cast<std::size_t>(kv_elements) * element, shape.kv_tokens, false)}) {
      if (!s) return Status::failure(std::string(kEntry) + ": packing the backward's inputs: " + s.message());
    }
  }
  if (spec.backward) {
    if (Status s =
            upload_int32(g.off_dq, ragged(layout.dq_rows, layout.q_counts, q_elements), "dQ scratch offsets");
        !s)
      return s;
    if (Status s = upload_int32(g.off_dkv, ragged(layout.dkv_rows, layout.kv_counts, kv_elements),
                                "dK/dV scratch offsets");
        !s)
      return s;
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

std::size_t cudnn_backend_version() {
  return cudnnGetVersion();
}

std::size_t cudnn_frontend_version() {
  return CUDNN_FRONTEND_VERSION;
}

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

Status validate_sdpa_plan(const AttentionShape& shape, std::span<const AttentionBlockDesc> blocks,
                          ElementType input_type, bool backward, int sm_version,
                          const SdpaBuildOptions& options, std::vector<std::string>* graphs) {
  PlanLayout layout;
  if (Status s = lay_out_plan(shape, blocks, input_type, backward, options, layout); !s) return s;
  for (const GraphLayout& g : layout.graphs) {
    if (Status s = validate_sdpa_graph(g.spec, sm_version); !s) return s;
    if (graphs != nullptr) graphs->push_back(describe_graph(g.spec));
  }
  return Status::success();
}

Status sdpa_plan_graph_rows(const AttentionShape& shape, std::span<const AttentionBlockDesc> blocks,
                            ElementType input_type, bool backward, const SdpaBuildOptions& options,
                            std::vector<SdpaGraphRows>& graphs) {
  PlanLayout layout;
  if (Status s = lay_out_plan(shape, blocks, input_type, backward, options, layout); !s) return s;
  graphs = std::move(layout.graphs);
  return Status::success();
}

Status SdpaPlan::build(const AttentionShape& shape, std::span<const AttentionBlockDesc> blocks,
                       ElementType input_type, bool backward, const SdpaBuildOptions& options) {
  // Everything that can be refused without a device is decided first (argument errors name the block
  // before any cuDNN or CUDA call), by the code validate_sdpa_plan runs too.
  PlanLayout layout;
  if (Status s = lay_out_plan(shape, blocks, input_type, backward, options, layout); !s) return s;

  auto fresh = std::make_unique<Impl>();
  fresh->shape = shape;
  fresh->type = input_type;
  fresh->backward = backward;
  if (const cudnnStatus_t status = cudnnCreate(&fresh->handle); status != CUDNN_STATUS_SUCCESS)
    return Status::failure(std::string(kEntry) + ": cudnnCreate: " + detail::cudnn_error_text(status));
  fresh->scratch_q_rows = layout.scratch_q_rows;
  fresh->scratch_kv_rows = layout.scratch_kv_rows;
  if (!backward) {
    fresh->empty_row_count = static_cast<std::int64_t>(layout.empty_rows.size());
    if (Status s = fresh->empty_rows.upload(layout.empty_rows, kEntry, "empty rows"); !s) return s;
  }
  std::int64_t packed_q_rows = 0, packed_kv_rows = 0;  // the largest graph's (the buffers are shared)
  for (const GraphLayout& g : layout.graphs) {
    fresh->graphs.emplace_back();
    if (Status s = build_graph(fresh->handle, g, fresh->graphs.back()); !s) return s;
    fresh->cudnn_workspace =
        std::max(fresh->cudnn_workspace, static_cast<std::size_t>(fresh->graphs.back().workspace));
    packed_q_rows = std::max(packed_q_rows, fresh->graphs.back().pack_q.total_rows());
    packed_kv_rows = std::max(packed_kv_rows, fresh->graphs.back().pack_kv.total_rows());
  }
  if (backward) {
    if (Status s = upload_gather(
            fresh->dq_map, build_gather_map(layout.dq_dest, layout.dq_count, layout.dq_source), "dQ map");
        !s)
      return s;
    if (Status s = upload_gather(fresh->dkv_map,
                                 build_gather_map(layout.dkv_dest, layout.dkv_count, layout.dkv_source),
                                 "dK/dV map");
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
  for (std::size_t i = 0; i < layout.graphs.size(); ++i) {  // each graph's part of the scratch
    detail::SdpaGraph& g = fresh->graphs[i];
    g.dq_offset =
        fresh->dq_scratch_offset + static_cast<std::size_t>(layout.graphs[i].scratch_q_base) * q_row_bytes;
    g.dk_offset =
        fresh->dk_scratch_offset + static_cast<std::size_t>(layout.graphs[i].scratch_kv_base) * kv_row_bytes;
    g.dv_offset =
        fresh->dv_scratch_offset + static_cast<std::size_t>(layout.graphs[i].scratch_kv_base) * kv_row_bytes;
  }
  // Then, backward with packed inputs: [packed Q | O | dO | LSE | K | V].
  const std::size_t packed_q_bytes = detail::align_up(static_cast<std::size_t>(packed_q_rows) * q_row_bytes);
  const std::size_t packed_kv_bytes =
      detail::align_up(static_cast<std::size_t>(packed_kv_rows) * kv_row_bytes);
  fresh->packed_q_offset = fresh->dv_scratch_offset +
                           detail::align_up(static_cast<std::size_t>(fresh->scratch_kv_rows) * kv_row_bytes);
  fresh->packed_o_offset = fresh->packed_q_offset + packed_q_bytes;
  fresh->packed_do_offset = fresh->packed_o_offset + packed_q_bytes;
  fresh->packed_stats_offset = fresh->packed_do_offset + packed_q_bytes;
  fresh->packed_k_offset =
      fresh->packed_stats_offset + detail::align_up(static_cast<std::size_t>(packed_q_rows) *
                                                    static_cast<std::size_t>(shape.heads) * sizeof(float));
  fresh->packed_v_offset = fresh->packed_k_offset + packed_kv_bytes;
  fresh->workspace_bytes = backward ? fresh->packed_v_offset + packed_kv_bytes : fresh->cudnn_workspace;
  impl_ = std::move(fresh);
  return Status::success();
}

}  // namespace zb::kernels::cuda
