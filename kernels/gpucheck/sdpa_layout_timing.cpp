// zb_gpucheck time-bwd-layouts: why this project's cuDNN backward ran at about half of the rate PyTorch's
// SDPA reaches with the same cuDNN on an H200 (docs/gpu-runs/2026-12-04-h200-run2: 235-259 against
// 499-548 TFLOP/s). One causal sequence, the same buffers, cuDNN graphs that differ in one property at a
// time: the tensors' layout (BHSD as torch passes them, or BSHD/THD rows as the plan holds them), ragged
// offsets, the padding mask, the causal diagonal's alignment (bottom-right, as the plan's kinds use, or
// top-left), cuDNN's fp32 accumulators sized by max_total_seq_len, and, for the first layout, every
// engine the heuristics offer. Each line names the engine cuDNN chose, so the figure says which kernel
// ran. Timing: kernels/gpucheck/timing.hpp (random inputs, warm-up, median of timed runs).
#include <cuda_runtime.h>
#include <cudnn.h>
#include <cudnn_frontend.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "kernels/gpucheck/device_buffer.hpp"
#include "kernels/gpucheck/sdpa_check.hpp"
#include "kernels/gpucheck/timing.hpp"

namespace zb::kernels::gpucheck {
namespace {

namespace fe = cudnn_frontend;
using TensorPtr = std::shared_ptr<fe::graph::Tensor_attributes>;

struct Layout {
  const char* name;
  bool bhsd;          // torch's (b, h, s, d) contiguous; else token-major rows (b, s, h, d)
  bool ragged;        // THD: ragged offsets per entry
  bool padding_mask;  // seq_len_q/kv tensors and the padding mask
  bool bottom_right;  // causal diagonal aligned bottom-right (the plan's kinds), else top-left
  bool max_total;     // backward: fp32 accumulators sized by max_total_seq_len
};

constexpr Layout kLayouts[] = {
    {"BHSD dense, top-left causal (torch's call)", true, false, false, false, false},
    {"BSHD dense, top-left causal", false, false, false, false, false},
    {"BSHD dense, bottom-right causal", false, false, false, true, false},
    {"BSHD dense + padding mask, bottom-right", false, false, true, true, false},
    {"THD ragged + padding mask, top-left, max_total", false, true, true, false, true},
    {"THD ragged + padding mask, bottom-right, no max_total", false, true, true, true, false},
    {"THD ragged + padding mask, bottom-right, max_total (this project's)", false, true, true, true, true},
};

enum Uid : std::int64_t { kQ = 1, kK, kV, kO, kStats, kDO, kDQ, kDK, kDV, kSeqQ, kSeqKV, kOffQKV, kOffStats };

std::string fe_text(fe::error_t e) {
  return e.is_good() ? std::string() : e.get_message();
}

struct Built {
  std::shared_ptr<fe::graph::Graph> graph;
  std::int64_t workspace = 0;
  std::string error;
};

// One graph of `layout` over (1, h, s, d), forward (O, Stats out) or backward (dQ, dK, dV out).
Built build(cudnnHandle_t handle, const Layout& layout, std::int64_t s, std::int64_t h, std::int64_t d,
            bool backward, bool all_engines) {
  Built out;
  auto graph = std::make_shared<fe::graph::Graph>();
  graph->set_io_data_type(fe::DataType_t::BFLOAT16)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  const std::vector<std::int64_t> dims{1, h, s, d};
  const std::vector<std::int64_t> strides = layout.bhsd ? std::vector<std::int64_t>{h * s * d, s * d, d, 1}
                                                        : std::vector<std::int64_t>{s * h * d, d, h * d, 1};
  const std::vector<std::int64_t> stats_strides =
      layout.bhsd ? std::vector<std::int64_t>{h * s, s, 1, 1} : std::vector<std::int64_t>{s * h, 1, h, 1};
  auto int32 = [&](const char* name, std::int64_t uid) {
    return graph->tensor(fe::graph::Tensor_attributes()
                             .set_name(name)
                             .set_uid(uid)
                             .set_dim({layout.ragged && uid >= kOffQKV ? 2 : 1, 1, 1, 1})
                             .set_stride({1, 1, 1, 1})
                             .set_data_type(fe::DataType_t::INT32));
  };
  TensorPtr off_qkv, off_stats, seq_q, seq_kv;
  if (layout.ragged) {
    off_qkv = int32("offset_qkv", kOffQKV);
    off_stats = int32("offset_stats", kOffStats);
  }
  if (layout.padding_mask) {
    seq_q = int32("seq_q", kSeqQ);
    seq_kv = int32("seq_kv", kSeqKV);
  }
  auto attrs = [&](const char* name, std::int64_t uid) {
    auto t = fe::graph::Tensor_attributes().set_name(name).set_uid(uid).set_dim(dims).set_stride(strides);
    if (layout.ragged) t.set_ragged_offset(off_qkv);
    return t;
  };
  auto stats_attrs = [&](fe::graph::Tensor_attributes& t) {
    t.set_uid(kStats).set_dim({1, h, s, 1}).set_stride(stats_strides).set_data_type(fe::DataType_t::FLOAT);
    if (layout.ragged) t.set_ragged_offset(off_stats);
  };
  auto output = [&](const TensorPtr& t, std::int64_t uid) {
    t->set_output(true).set_uid(uid).set_dim(dims).set_stride(strides);
    if (layout.ragged) t->set_ragged_offset(off_qkv);
  };
  auto mask = [&](auto& a) {
    if (layout.padding_mask) a.set_padding_mask(true).set_seq_len_q(seq_q).set_seq_len_kv(seq_kv);
    a.set_diagonal_alignment(layout.bottom_right ? fe::DiagonalAlignment_t::BOTTOM_RIGHT
                                                 : fe::DiagonalAlignment_t::TOP_LEFT)
        .set_diagonal_band_right_bound(0);
  };
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  try {
    const TensorPtr q = graph->tensor(attrs("Q", kQ)), k = graph->tensor(attrs("K", kK)),
                    v = graph->tensor(attrs("V", kV));
    if (!backward) {
      auto a = fe::graph::SDPA_attributes().set_name("fwd").set_generate_stats(true).set_attn_scale(scale);
      mask(a);
      auto [o, stats] = graph->sdpa(q, k, v, a);
      output(o, kO);
      stats->set_output(true);
      stats_attrs(*stats);
    } else {
      const TensorPtr o = graph->tensor(attrs("O", kO)), d_o = graph->tensor(attrs("dO", kDO));
      fe::graph::Tensor_attributes st;
      st.set_name("Stats");
      stats_attrs(st);
      const TensorPtr stats = graph->tensor(st);
      auto a = fe::graph::SDPA_backward_attributes().set_name("bwd").set_attn_scale(scale);
      if (layout.max_total) a.set_max_total_seq_len_q(s).set_max_total_seq_len_kv(s);
      mask(a);
      auto [dq, dk, dv] = graph->sdpa_backward(q, k, v, o, d_o, stats, a);
      output(dq, kDQ);
      output(dk, kDK);
      output(dv, kDV);
    }
  } catch (const std::exception& e) {
    out.error = std::string("graph construction: ") + e.what();
    return out;
  }
  std::vector<fe::HeurMode_t> modes{fe::HeurMode_t::A};
  if (all_engines) modes.push_back(fe::HeurMode_t::FALLBACK);
  // Step by step: a later step must not run on a graph an earlier one refused.
  auto failed = [&](const char* step, fe::error_t error) {
    if (error.is_good()) return false;
    out.error = std::string(step) + ": " + fe_text(error);
    return true;
  };
  if (failed("validate", graph->validate()) ||
      failed("build_operation_graph", graph->build_operation_graph(handle)) ||
      failed("create_execution_plans", graph->create_execution_plans(modes)) ||
      failed("check_support", graph->check_support(handle)) ||
      failed("build_plans", graph->build_plans(all_engines ? fe::BuildPlanPolicy_t::ALL
                                                           : fe::BuildPlanPolicy_t::HEURISTICS_CHOICE)))
    return out;
  // Every plan's workspace: the engines timed one by one each need theirs.
  out.workspace = graph->get_autotune_workspace_size();
  out.graph = std::move(graph);
  return out;
}

}  // namespace

int run_backward_layout_timing(int heads, int head_dim, const std::vector<long long>& lengths) {
  cudnnHandle_t handle = nullptr;
  if (cudnnCreate(&handle) != CUDNN_STATUS_SUCCESS) {
    std::printf("FAIL cudnnCreate\n");
    return 1;
  }
  int failures = 0;
  for (long long s : lengths) {
    const std::size_t elements = static_cast<std::size_t>(s) * static_cast<std::size_t>(heads * head_dim);
    DeviceBuffer q, k, v, o, d_o, dq, dk, dv, stats, ints, workspace;
    for (Status st :
         {q.allocate(elements * 2, "q"), k.allocate(elements * 2, "k"), v.allocate(elements * 2, "v"),
          o.allocate(elements * 2, "o"), d_o.allocate(elements * 2, "d_o"), dq.allocate(elements * 2, "dq"),
          dk.allocate(elements * 2, "dk"), dv.allocate(elements * 2, "dv"),
          stats.allocate(static_cast<std::size_t>(s) * heads * 4, "stats"),
          ints.allocate(6 * sizeof(std::int32_t), "ints")}) {
      if (!st) {
        std::printf("FAIL %s\n", st.message().c_str());
        return 1;
      }
    }
    std::uint64_t seed = 91;
    for (DeviceBuffer* b : {&q, &k, &v, &d_o})
      if (Status st = fill_uniform_bf16(*b, seed++, "input"); !st) return 1;
    // seq_q, seq_kv, offsets {0, s·h·d} and stats offsets {0, s·h}.
    const std::int32_t host_ints[6] = {static_cast<std::int32_t>(s),
                                       static_cast<std::int32_t>(s),
                                       0,
                                       static_cast<std::int32_t>(elements),
                                       0,
                                       static_cast<std::int32_t>(s * heads)};
    if (cudaMemcpy(ints.get(), host_ints, sizeof(host_ints), cudaMemcpyHostToDevice) != cudaSuccess) return 1;
    auto* int_ptr = static_cast<std::int32_t*>(ints.get());
    std::unordered_map<std::int64_t, void*> pack{
        {kQ, q.get()},           {kK, k.get()},    {kV, v.get()},         {kO, o.get()},
        {kStats, stats.get()},   {kDO, d_o.get()}, {kDQ, dq.get()},       {kDK, dk.get()},
        {kDV, dv.get()},         {kSeqQ, int_ptr}, {kSeqKV, int_ptr + 1}, {kOffQKV, int_ptr + 2},
        {kOffStats, int_ptr + 4}};
    const double flops = 4.0 * static_cast<double>(s) * static_cast<double>(s) * heads * head_dim / 2.0;
    for (const Layout& layout : kLayouts) {
      const bool all_engines = &layout == &kLayouts[0];
      Built fwd = build(handle, layout, s, heads, head_dim, false, false);
      Built bwd = build(handle, layout, s, heads, head_dim, true, all_engines);
      if (!fwd.error.empty() || !bwd.error.empty()) {
        std::printf("LAYOUT %lld | %s | not supported: %s%s\n", s, layout.name, fwd.error.c_str(),
                    bwd.error.c_str());
        continue;
      }
      const std::size_t ws = static_cast<std::size_t>(std::max(fwd.workspace, bwd.workspace));
      if (workspace.bytes() < ws) {
        workspace = DeviceBuffer();
        if (Status st = workspace.allocate(ws, "workspace"); !st) return 1;
      }
      MedianTiming f, b;
      Status st = median_ms(
          [&](int) {
            auto e = fwd.graph->execute(handle, pack, workspace.get());
            return e.is_good() ? Status::success() : Status::failure("forward: " + fe_text(e));
          },
          "layout forward", f);
      // The forward's O and Stats are the backward's inputs, as in training.
      for (std::int64_t plan = 0; st && plan < (all_engines ? bwd.graph->get_execution_plan_count() : 1);
           ++plan) {
        std::string engine;
        // Without ALL, the heuristics' pick is the graph's candidate, not necessarily index 0.
        static_cast<void>(all_engines ? bwd.graph->get_plan_name_at_index(plan, engine)
                                      : bwd.graph->get_plan_name(engine));
        Status one = median_ms(
            [&](int) {
              auto e = all_engines ? bwd.graph->execute_plan_at_index(handle, pack, workspace.get(), plan)
                                   : bwd.graph->execute(handle, pack, workspace.get());
              return e.is_good() ? Status::success() : Status::failure("backward: " + fe_text(e));
            },
            "layout backward", b);
        if (!one) {
          std::printf("LAYOUT %lld | %s | engine %s | backward failed: %s\n", s, layout.name, engine.c_str(),
                      one.message().c_str());
          continue;
        }
        std::printf("LAYOUT %lld | %s | engine %s | fwd %.3f ms %.1f TFLOP/s | bwd %.3f ms %.1f TFLOP/s\n", s,
                    layout.name, engine.c_str(), f.median_ms, flops / (f.median_ms * 1e-3) / 1e12,
                    b.median_ms, 2.5 * flops / (b.median_ms * 1e-3) / 1e12);
      }
      if (!st) {
        std::printf("LAYOUT %lld | %s | FAIL %s\n", s, layout.name, st.message().c_str());
        ++failures;
      }
      std::fflush(stdout);
    }
  }
  cudnnDestroy(handle);
  return failures == 0 ? 0 : 1;
}

}  // namespace zb::kernels::gpucheck
