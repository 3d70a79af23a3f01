// The GPU correctness checks (see attention_check.hpp): device runs against the float64 CPU oracle.
#include "kernels/gpucheck/attention_check.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include "core/common/rng.hpp"
#include "kernels/gpucheck/device_buffer.hpp"
#include "kernels/half.hpp"

namespace zb::kernels::gpucheck {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::uint16_t to_bits(cuda::ElementType type, double x) {
  return type == cuda::ElementType::bf16 ? float_to_bf16_bits(static_cast<float>(x))
                                         : float_to_fp16_bits(static_cast<float>(x));
}
double from_bits(cuda::ElementType type, std::uint16_t bits) {
  return type == cuda::ElementType::bf16 ? bf16_bits_to_float(bits) : fp16_bits_to_float(bits);
}

// Random values rounded to the device type; `values` receives the rounded values for the oracle.
std::vector<std::uint16_t> random_device_values(Rng& rng, cuda::ElementType type, std::int64_t count,
                                                std::vector<double>& values) {
  std::vector<std::uint16_t> bits(static_cast<std::size_t>(count));
  values.resize(bits.size());
  for (std::size_t i = 0; i < bits.size(); ++i) {
    bits[i] = to_bits(type, rng.normal());
    values[i] = from_bits(type, bits[i]);
  }
  return bits;
}

// Compares with the oracle; NaN in the oracle marks rows no block writes (they must stay poisoned).
CheckResult compare(const std::vector<double>& o, const std::vector<double>& o_ref, const std::vector<double>& lse,
                    const std::vector<double>& lse_ref) {
  CheckResult result;
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < o_ref.size(); ++i) {
    if (std::isnan(o_ref[i]) != std::isnan(o[i])) {
      result.detail = "O element " + std::to_string(i) + (std::isnan(o[i]) ? " was not written" : " was overwritten");
      return result;
    }
    if (std::isnan(o_ref[i])) continue;
    diff += (o[i] - o_ref[i]) * (o[i] - o_ref[i]);
    norm += o_ref[i] * o_ref[i];
  }
  result.output_error = norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
  for (std::size_t i = 0; i < lse_ref.size(); ++i) {
    const bool both_nan = std::isnan(lse[i]) && std::isnan(lse_ref[i]);
    const bool both_empty = std::isinf(lse[i]) && lse[i] == lse_ref[i];
    if (both_nan || both_empty) continue;
    if (std::isnan(lse[i]) || std::isinf(lse[i]) || std::isnan(lse_ref[i]) || std::isinf(lse_ref[i])) {
      result.detail = "LSE row " + std::to_string(i) + " is " + std::to_string(lse[i]) + ", expected " +
                      std::to_string(lse_ref[i]);
      return result;
    }
    result.lse_error = std::max(result.lse_error, std::abs(lse[i] - lse_ref[i]));
  }
  result.passed = result.output_error <= kOutputTolerance && result.lse_error <= kLseTolerance;
  if (!result.passed)
    result.detail = "O error " + std::to_string(result.output_error) + " (tolerance " +
                    std::to_string(kOutputTolerance) + "), LSE error " + std::to_string(result.lse_error) +
                    " (tolerance " + std::to_string(kLseTolerance) + ")";
  return result;
}

CheckResult failed(const Status& status) { return {false, 0, 0, status.message()}; }

}  // namespace

CheckResult check_attention(const AttentionCase& c, std::uint64_t seed) {
  const AttentionShape& s = c.shape;
  Rng rng(seed);
  std::vector<double> q, k, v;
  const auto q_bits = random_device_values(rng, c.input_type, s.q_tokens * s.heads * s.head_dim, q);
  const auto k_bits = random_device_values(rng, c.input_type, s.kv_tokens * s.kv_heads * s.head_dim, k);
  const auto v_bits = random_device_values(rng, c.input_type, s.kv_tokens * s.kv_heads * s.head_dim, v);
  const std::int64_t o_count = s.out_rows * s.heads * s.head_dim;
  std::vector<double> o_ref(static_cast<std::size_t>(o_count), kNaN), lse_ref(static_cast<std::size_t>(s.out_rows * s.heads), kNaN);
  if (Status st = attention_forward(s, c.blocks, std::span<const double>(q), std::span<const double>(k),
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
  for (Status st : {dq.upload(q_bits.data(), "q"), dk.upload(k_bits.data(), "k"), dv.upload(v_bits.data(), "v"),
                    d_o.poison("o"), dlse.poison("lse")}) {
    if (!st) return failed(st);
  }
  cuda::AttentionSchedule schedule;
  if (Status st = schedule.build(s, c.blocks); !st) return failed(st);
  const cuda::AttentionTensors tensors{c.input_type, dq.get(), dk.get(), dv.get(), c.output_type, d_o.get(),
                                       static_cast<float*>(dlse.get())};
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
  return compare(o, o_ref, lse, lse_ref);
}

}  // namespace zb::kernels::gpucheck
