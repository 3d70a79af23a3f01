// The GPU correctness checks (see attention_check.hpp): device runs against the float64 CPU oracle.
#include "kernels/gpucheck/attention_check.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include "core/common/rng.hpp"
#include "kernels/gpucheck/device_buffer.hpp"
#include "kernels/gpucheck/host_values.hpp"

namespace zb::kernels::gpucheck {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Compares with the oracle element by element; NaN in the oracle marks rows no block writes (they must
// stay poisoned).
CheckResult compare(const std::vector<double>& o, const std::vector<double>& o_ref,
                    const std::vector<double>& lse, const std::vector<double>& lse_ref,
                    std::int64_t o_row_elements, std::int64_t heads) {
  const ElementwiseResult out = compare_elementwise("O", o, o_ref, kOutputTolerance, o_row_elements);
  const ElementwiseResult l = compare_elementwise("LSE", lse, lse_ref, kLseTolerance, heads);
  CheckResult result{out.passed && l.passed, out.worst_ratio, l.worst_ratio, out.detail};
  if (!l.passed) result.detail += (result.detail.empty() ? "" : "; ") + l.detail;
  return result;
}

CheckResult failed(const Status& status) {
  return {false, 0, 0, status.message()};
}

}  // namespace

CheckResult check_attention(const AttentionCase& c, std::uint64_t seed) {
  const AttentionShape& s = c.shape;
  Rng rng(seed);
  std::vector<double> q, k, v;
  const auto q_bits = random_device_values(rng, c.input_type, s.q_tokens * s.heads * s.head_dim, q);
  const auto k_bits = random_device_values(rng, c.input_type, s.kv_tokens * s.kv_heads * s.head_dim, k);
  const auto v_bits = random_device_values(rng, c.input_type, s.kv_tokens * s.kv_heads * s.head_dim, v);
  const std::int64_t o_count = s.out_rows * s.heads * s.head_dim;
  std::vector<double> o_ref(static_cast<std::size_t>(o_count), kNaN),
      lse_ref(static_cast<std::size_t>(s.out_rows * s.heads), kNaN);
  if (Status st =
          attention_forward(s, c.blocks, std::span<const double>(q), std::span<const double>(k),
                            std::span<const double>(v), std::span<double>(o_ref), std::span<double>(lse_ref));
      !st)
    return failed(st);

  const bool f32_out = c.output_type == cuda::ElementType::f32;
  const std::size_t o_bytes = static_cast<std::size_t>(o_count) * (f32_out ? 4 : 2);
  DeviceBuffer dq, dk, dv, d_o, dlse;
  for (Status st : {dq.allocate(q_bits.size() * 2, "q"), dk.allocate(k_bits.size() * 2, "k"),
                    dv.allocate(v_bits.size() * 2, "v"), d_o.allocate(o_bytes, "o"),
                    dlse.allocate(lse_ref.size() * 4, "lse")}) {
    if (!st) return failed(st);
  }
  for (Status st : {dq.upload(q_bits.data(), "q"), dk.upload(k_bits.data(), "k"),
                    dv.upload(v_bits.data(), "v"), d_o.poison("o"), dlse.poison("lse")}) {
    if (!st) return failed(st);
  }
  cuda::AttentionSchedule schedule;
  if (Status st = schedule.build(s, c.blocks); !st) return failed(st);
  const cuda::AttentionTensors tensors{
      c.input_type, dq.get(), dk.get(), dv.get(), c.output_type, d_o.get(), static_cast<float*>(dlse.get())};
  if (Status st = cuda::attention_forward(schedule, tensors, nullptr); !st) return failed(st);
  if (Status st = cuda::synchronize(nullptr, "check_attention"); !st) return failed(st);

  std::vector<double> o(static_cast<std::size_t>(o_count)), lse(lse_ref.size());
  std::vector<float> lse_f(lse_ref.size());
  if (Status st = dlse.download(lse_f.data(), "lse"); !st) return failed(st);
  for (std::size_t i = 0; i < lse.size(); ++i) lse[i] = lse_f[i];
  if (f32_out) {
    std::vector<float> of(o.size());
    if (Status st = d_o.download(of.data(), "o"); !st) return failed(st);
    for (std::size_t i = 0; i < o.size(); ++i) o[i] = of[i];
  } else {
    std::vector<std::uint16_t> ob(o.size());
    if (Status st = d_o.download(ob.data(), "o"); !st) return failed(st);
    for (std::size_t i = 0; i < o.size(); ++i) o[i] = from_bits(c.output_type, ob[i]);
  }
  return compare(o, o_ref, lse, lse_ref, static_cast<std::int64_t>(s.heads) * s.head_dim, s.heads);
}

}  // namespace zb::kernels::gpucheck
