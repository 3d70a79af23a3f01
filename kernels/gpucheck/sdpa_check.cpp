// cuDNN SDPA forward and backward against the float64 CPU oracle (see sdpa_check.hpp).
#include "kernels/gpucheck/sdpa_check.hpp"

#include <cmath>
#include <limits>
#include <span>

#include "kernels/attention_backward.hpp"
#include "kernels/cuda_sdpa.hpp"
#include "kernels/gpucheck/device_buffer.hpp"
#include "kernels/gpucheck/host_values.hpp"

namespace zb::kernels::gpucheck {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

CheckResult failed(const Status& status) {
  return {false, 0, 0, status.message()};
}

using Bits = std::vector<std::uint16_t>;

// Device copies of host halves.
Status to_device(DeviceBuffer& buffer, const Bits& bits, const std::string& name) {
  if (Status s = buffer.allocate(bits.size() * 2, name); !s) return s;
  return buffer.upload(bits.data(), name);
}

// Forward on the GPU into poisoned O/LSE; returns them as doubles.
Status run_forward(const SdpaCase& c, const DeviceBuffer& q, const DeviceBuffer& k, const DeviceBuffer& v,
                   std::vector<double>& o, std::vector<double>& lse) {
  const AttentionShape& s = c.shape;
  cuda::SdpaPlan plan;
  if (Status st = plan.build(s, c.blocks, c.type, false); !st) return st;
  DeviceBuffer d_o, d_lse, workspace;
  const std::size_t o_count = static_cast<std::size_t>(s.out_rows * s.heads * s.head_dim);
  const std::size_t lse_count = static_cast<std::size_t>(s.out_rows * s.heads);
  for (Status st :
       {d_o.allocate(o_count * 2, "o"), d_lse.allocate(lse_count * 4, "lse"),
        workspace.allocate(plan.workspace_bytes(), "workspace"), d_o.poison("o"), d_lse.poison("lse")}) {
    if (!st) return st;
  }
  const cuda::SdpaForwardTensors tensors{
      q.get(), k.get(), v.get(), d_o.get(), static_cast<float*>(d_lse.get()), workspace.get()};
  if (Status st = cuda::sdpa_forward(plan, tensors, nullptr); !st) return st;
  if (Status st = cuda::synchronize(nullptr, "check_sdpa_forward"); !st) return st;
  Bits o_bits(o_count);
  std::vector<float> lse_f(lse_count);
  if (Status st = d_o.download(o_bits.data(), "o"); !st) return st;
  if (Status st = d_lse.download(lse_f.data(), "lse"); !st) return st;
  o = halves_to_double(c.type, o_bits);
  lse.assign(lse_f.begin(), lse_f.end());
  return Status::success();
}

CheckResult combine(const ElementwiseResult& out, const ElementwiseResult& lse) {
  CheckResult r{out.passed && lse.passed, out.worst_ratio, lse.worst_ratio, {}};
  if (!out.passed) r.detail = out.detail;
  if (!lse.passed) r.detail += (r.detail.empty() ? "" : "; ") + lse.detail;
  return r;
}

}  // namespace

CheckResult check_sdpa_forward(const SdpaCase& c, std::uint64_t seed) {
  const AttentionShape& s = c.shape;
  Rng rng(seed);
  std::vector<double> q, k, v;
  const Bits q_bits = random_device_values(rng, c.type, s.q_tokens * s.heads * s.head_dim, q);
  const Bits k_bits = random_device_values(rng, c.type, s.kv_tokens * s.kv_heads * s.head_dim, k);
  const Bits v_bits = random_device_values(rng, c.type, s.kv_tokens * s.kv_heads * s.head_dim, v);
  std::vector<double> o_ref(static_cast<std::size_t>(s.out_rows * s.heads * s.head_dim), kNaN);
  std::vector<double> lse_ref(static_cast<std::size_t>(s.out_rows * s.heads), kNaN);
  if (Status st =
          attention_forward(s, c.blocks, std::span<const double>(q), std::span<const double>(k),
                            std::span<const double>(v), std::span<double>(o_ref), std::span<double>(lse_ref));
      !st)
    return failed(st);
  DeviceBuffer dq, dk, dv;
  for (Status st : {to_device(dq, q_bits, "q"), to_device(dk, k_bits, "k"), to_device(dv, v_bits, "v")}) {
    if (!st) return failed(st);
  }
  std::vector<double> o, lse;
  if (Status st = run_forward(c, dq, dk, dv, o, lse); !st) return failed(st);
  const SdpaTolerances t = sdpa_tolerances(c.type);
  return combine(compare_elementwise("O", o, o_ref, t.o, static_cast<std::int64_t>(s.heads) * s.head_dim),
                 compare_elementwise("LSE", lse, lse_ref, t.lse, s.heads));
}

CheckResult check_sdpa_backward(const SdpaCase& c, std::uint64_t seed,
                                const cuda::SdpaBuildOptions& options) {
  const AttentionShape& s = c.shape;
  const std::vector<AttentionBlockDesc>& backward = c.backward_blocks.empty() ? c.blocks : c.backward_blocks;
  const std::int64_t q_count = s.q_tokens * s.heads * s.head_dim,
                     kv_count = s.kv_tokens * s.kv_heads * s.head_dim;
  const std::int64_t o_count = s.out_rows * s.heads * s.head_dim;
  Rng rng(seed);
  std::vector<double> q, k, v, d_o, dq0, dk0, dv0;
  const Bits q_bits = random_device_values(rng, c.type, q_count, q);
  const Bits k_bits = random_device_values(rng, c.type, kv_count, k);
  const Bits v_bits = random_device_values(rng, c.type, kv_count, v);
  const Bits do_bits = random_device_values(rng, c.type, o_count, d_o);
  // Nonzero starting gradients: the plan must add to them, not overwrite them.
  const Bits dq_bits = random_device_values(rng, c.type, q_count, dq0, 0.1);
  const Bits dk_bits = random_device_values(rng, c.type, kv_count, dk0, 0.1);
  const Bits dv_bits = random_device_values(rng, c.type, kv_count, dv0, 0.1);
  // Final O/LSE from the float64 forward, rounded as the GPU sees them (O in the input type, LSE f32);
  // rows no block writes are 0 / −inf, which no backward block reads.
  std::vector<double> o(static_cast<std::size_t>(o_count), 0.0),
      lse(static_cast<std::size_t>(s.out_rows * s.heads), -std::numeric_limits<double>::infinity());
  if (Status st = attention_forward(s, c.blocks, std::span<const double>(q), std::span<const double>(k),
                                    std::span<const double>(v), std::span<double>(o), std::span<double>(lse));
      !st)
    return failed(st);
  Bits o_bits(o.size());
  std::vector<float> lse_f(lse.size());
  for (std::size_t i = 0; i < o.size(); ++i) o_bits[i] = to_bits(c.type, o[i]);
  for (std::size_t i = 0; i < lse.size(); ++i) lse_f[i] = static_cast<float>(lse[i]);
  o = halves_to_double(c.type, o_bits);
  lse.assign(lse_f.begin(), lse_f.end());
  std::vector<double> dq_ref = dq0, dk_ref = dk0, dv_ref = dv0;
  if (Status st = attention_backward(
          s, backward, std::span<const double>(q), std::span<const double>(k), std::span<const double>(v),
          std::span<const double>(o), std::span<const double>(d_o), std::span<const double>(lse),
          std::span<double>(dq_ref), std::span<double>(dk_ref), std::span<double>(dv_ref));
      !st)
    return failed(st);

  cuda::SdpaPlan plan;
  if (Status st = plan.build(s, backward, c.type, true, options); !st) return failed(st);
  DeviceBuffer bq, bk, bv, bo, bdo, blse, bdq, bdk, bdv, workspace;
  for (Status st : {to_device(bq, q_bits, "q"), to_device(bk, k_bits, "k"), to_device(bv, v_bits, "v"),
                    to_device(bo, o_bits, "o"), to_device(bdo, do_bits, "d_o"), to_device(bdq, dq_bits, "dq"),
                    to_device(bdk, dk_bits, "dk"), to_device(bdv, dv_bits, "dv"),
                    blse.allocate(lse_f.size() * 4, "lse"), blse.upload(lse_f.data(), "lse"),
                    workspace.allocate(plan.workspace_bytes(), "workspace"), workspace.poison("workspace")}) {
    if (!st) return failed(st);
  }
  const cuda::SdpaBackwardTensors tensors{
      bq.get(),  bk.get(),  bv.get(),  bo.get(),       bdo.get(), static_cast<const float*>(blse.get()),
      bdq.get(), bdk.get(), bdv.get(), workspace.get()};
  if (Status st = cuda::sdpa_backward(plan, tensors, nullptr); !st) return failed(st);
  if (Status st = cuda::synchronize(nullptr, "check_sdpa_backward"); !st) return failed(st);
  Bits dq_out(dq_bits.size()), dk_out(dk_bits.size()), dv_out(dv_bits.size());
  for (Status st : {bdq.download(dq_out.data(), "dq"), bdk.download(dk_out.data(), "dk"),
                    bdv.download(dv_out.data(), "dv")}) {
    if (!st) return failed(st);
  }
  const Tolerance t = sdpa_tolerances(c.type).gradient;
  const std::int64_t q_row = static_cast<std::int64_t>(s.heads) * s.head_dim;
  const std::int64_t kv_row = static_cast<std::int64_t>(s.kv_heads) * s.head_dim;
  const ElementwiseResult results[] = {
      compare_elementwise("dQ", halves_to_double(c.type, dq_out), dq_ref, t, q_row),
      compare_elementwise("dK", halves_to_double(c.type, dk_out), dk_ref, t, kv_row),
      compare_elementwise("dV", halves_to_double(c.type, dv_out), dv_ref, t, kv_row)};
  CheckResult r{true, 0, 0, {}};
  for (const ElementwiseResult& e : results) {
    r.output_error = std::max(r.output_error, e.worst_ratio);
    if (!e.passed) {
      r.passed = false;
      r.detail += (r.detail.empty() ? "" : "; ") + e.detail;
    }
  }
  return r;
}

CheckResult check_sdpa_long_causal(std::int64_t length, int heads, int kv_heads, int head_dim,
                                   std::int64_t sample_rows, std::uint64_t seed) {
  SdpaCase c{
      "long causal", {heads, kv_heads, head_dim, length, length, length}, {}, {}, cuda::ElementType::bf16};
  c.blocks = {{0, length, 0, length, 0, 0, AttentionMask::causal, 0}};
  Rng rng(seed);
  std::vector<double> q, k, v;
  const Bits q_bits = random_device_values(rng, c.type, length * heads * head_dim, q);
  const Bits k_bits = random_device_values(rng, c.type, length * kv_heads * head_dim, k);
  const Bits v_bits = random_device_values(rng, c.type, length * kv_heads * head_dim, v);
  DeviceBuffer dq, dk, dv;
  for (Status st : {to_device(dq, q_bits, "q"), to_device(dk, k_bits, "k"), to_device(dv, v_bits, "v")}) {
    if (!st) return failed(st);
  }
  std::vector<double> o, lse;
  if (Status st = run_forward(c, dq, dk, dv, o, lse); !st) return failed(st);
  // The oracle on sampled rows only: one single-query block per row (its own out row), all its keys.
  AttentionShape sample_shape = c.shape;
  sample_shape.out_rows = sample_rows;
  std::vector<AttentionBlockDesc> sample_blocks;
  std::vector<double> o_gpu, lse_gpu;
  const std::int64_t row_elements = static_cast<std::int64_t>(heads) * head_dim;
  for (std::int64_t i = 0; i < sample_rows; ++i) {
    const std::int64_t row = sample_rows == 1 ? length - 1 : i * (length - 1) / (sample_rows - 1);
    sample_blocks.push_back({row, 1, 0, row + 1, row, 0, AttentionMask::causal, i});
    o_gpu.insert(o_gpu.end(), o.begin() + row * row_elements, o.begin() + (row + 1) * row_elements);
    lse_gpu.insert(lse_gpu.end(), lse.begin() + row * heads, lse.begin() + (row + 1) * heads);
  }
  std::vector<double> o_ref(o_gpu.size()), lse_ref(lse_gpu.size());
  if (Status st = attention_forward(sample_shape, sample_blocks, std::span<const double>(q),
                                    std::span<const double>(k), std::span<const double>(v),
                                    std::span<double>(o_ref), std::span<double>(lse_ref));
      !st)
    return failed(st);
  const SdpaTolerances t = sdpa_tolerances(c.type);
  return combine(compare_elementwise("O (sampled rows)", o_gpu, o_ref, t.o, row_elements),
                 compare_elementwise("LSE (sampled rows)", lse_gpu, lse_ref, t.lse, heads));
}

}  // namespace zb::kernels::gpucheck
