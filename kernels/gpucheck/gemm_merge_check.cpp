// cuBLASLt GEMM correctness and timing, and the GPU LSE merge with empty (−inf) sides (see sdpa_check.hpp).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>

#include "kernels/cuda_gemm.hpp"
#include "kernels/gpucheck/device_buffer.hpp"
#include "kernels/gpucheck/host_values.hpp"
#include "kernels/gpucheck/sdpa_check.hpp"
#include "kernels/gpucheck/timing.hpp"

namespace zb::kernels::gpucheck {

namespace {

constexpr std::size_t kGemmWorkspace = std::size_t{32} << 20;  // the budget the executor gives too

CheckResult failed(const Status& status) {
  return {false, 0, 0, status.message()};
}

}  // namespace

CheckResult check_gemm(std::int64_t m, std::int64_t n, std::int64_t k, cuda::ElementType type,
                       bool transpose_a, bool transpose_b, bool accumulate, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<double> a, b, c0;
  const auto a_bits = random_device_values(rng, type, m * k, a);
  const auto b_bits = random_device_values(rng, type, k * n, b);
  const auto c_bits = random_device_values(rng, type, m * n, c0);
  // Stored A is m×k (k×m when transposed), B k×n (n×k when transposed), all row-major.
  const auto at = [&](std::int64_t i, std::int64_t p) { return transpose_a ? a[p * m + i] : a[i * k + p]; };
  const auto bt = [&](std::int64_t p, std::int64_t j) { return transpose_b ? b[j * k + p] : b[p * n + j]; };
  std::vector<double> c_ref(static_cast<std::size_t>(m * n));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double sum = accumulate ? c0[i * n + j] : 0.0;
      for (std::int64_t p = 0; p < k; ++p) sum += at(i, p) * bt(p, j);
      c_ref[i * n + j] = sum;
    }
  cuda::GemmPlan plan;
  if (Status st = plan.build(m, n, k, type, transpose_a, transpose_b, kGemmWorkspace); !st) return failed(st);
  DeviceBuffer da, db, dc, workspace;
  for (Status st :
       {da.allocate(a_bits.size() * 2, "a"), db.allocate(b_bits.size() * 2, "b"),
        dc.allocate(c_bits.size() * 2, "c"), workspace.allocate(plan.workspace_bytes(), "workspace"),
        da.upload(a_bits.data(), "a"), db.upload(b_bits.data(), "b"), dc.upload(c_bits.data(), "c")}) {
    if (!st) return failed(st);
  }
  if (!accumulate) {
    if (Status st = dc.poison("c"); !st) return failed(st);  // β = 0 must not read C (NaN·0 would show)
  }
  if (Status st = cuda::gemm(plan, da.get(), db.get(), dc.get(), workspace.get(), accumulate, nullptr); !st)
    return failed(st);
  if (Status st = cuda::synchronize(nullptr, "check_gemm"); !st) return failed(st);
  std::vector<std::uint16_t> out(c_bits.size());
  if (Status st = dc.download(out.data(), "c"); !st) return failed(st);
  // fp32 accumulation of k products, one rounding to the output type.
  const Tolerance tolerance{0, type == cuda::ElementType::bf16 ? 1e-2 : 2e-3,
                            type == cuda::ElementType::bf16 ? 4e-3 : 5e-4};
  const ElementwiseResult r = compare_elementwise("C", halves_to_double(type, out), c_ref, tolerance, n);
  return {r.passed, r.worst_ratio, 0, r.detail};
}

Timing time_gemm(std::int64_t m, std::int64_t n, std::int64_t k) {
  cuda::GemmPlan plan;
  if (Status st = plan.build(m, n, k, cuda::ElementType::bf16, false, false, kGemmWorkspace); !st)
    return {0, 0, st.message()};
  // Random operands (kernels/gpucheck/timing.hpp: zeros would run faster than real data), rotated among
  // enough sets to defeat the L2 when one set fits in it (8192³: 384 MiB a set, so one set).
  const auto a_bytes = static_cast<std::size_t>(m * k) * 2, b_bytes = static_cast<std::size_t>(k * n) * 2,
             c_bytes = static_cast<std::size_t>(m * n) * 2;
  const int sets = operand_sets(a_bytes + b_bytes + c_bytes);
  std::vector<DeviceBuffer> a(static_cast<std::size_t>(sets)), b(a.size()), c(a.size());
  DeviceBuffer workspace;
  if (Status st = workspace.allocate(plan.workspace_bytes(), "workspace"); !st) return {0, 0, st.message()};
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string set = "[" + std::to_string(i) + "]";
    for (Status st : {a[i].allocate(a_bytes, "a" + set), b[i].allocate(b_bytes, "b" + set),
                      c[i].allocate(c_bytes, "c" + set), fill_uniform_bf16(a[i], 1000 + 2 * i, "a" + set),
                      fill_uniform_bf16(b[i], 1001 + 2 * i, "b" + set)}) {
      if (!st) return {0, 0, st.message()};
    }
  }
  MedianTiming t;
  if (Status st = median_ms(
          [&](int run) {
            const auto i = static_cast<std::size_t>(run % sets);
            return cuda::gemm(plan, a[i].get(), b[i].get(), c[i].get(), workspace.get(), false, nullptr);
          },
          "time_gemm", t);
      !st)
    return {0, 0, st.message()};
  return {t.median_ms, plan.flops() / (t.median_ms * 1e-3) / 1e12, {}, t.timed_runs, sets};
}

CheckResult check_merge_empty_sides(std::uint64_t seed) {
  // Rows cycle through: both finite, a empty, b empty, both empty; a's O is NaN on every other empty
  // row (garbage the CPU never reads) and 0 on the rest (what an empty partial holds).
  const int heads = 4, head_dim = 64;
  const std::int64_t rows = 64;
  const double inf = std::numeric_limits<double>::infinity();
  Rng rng(seed);
  std::vector<double> o_a(static_cast<std::size_t>(rows * heads * head_dim)), o_b(o_a.size());
  std::vector<double> lse_a(static_cast<std::size_t>(rows * heads)), lse_b(lse_a.size());
  for (std::size_t rh = 0; rh < lse_a.size(); ++rh) {
    const std::size_t pattern = (rh / static_cast<std::size_t>(heads)) % 4;
    lse_a[rh] = (pattern == 1 || pattern == 3) ? -inf : static_cast<float>(rng.normal() * 3);
    lse_b[rh] = (pattern == 2 || pattern == 3) ? -inf : static_cast<float>(rng.normal() * 3);
    for (int c = 0; c < head_dim; ++c) {
      const std::size_t i = rh * static_cast<std::size_t>(head_dim) + static_cast<std::size_t>(c);
      const bool garbage = std::isinf(lse_a[rh]) && (rh / static_cast<std::size_t>(heads) / 4) % 2 == 1;
      o_a[i] = std::isinf(lse_a[rh]) ? (garbage ? std::numeric_limits<double>::quiet_NaN() : 0.0)
                                     : static_cast<float>(rng.normal());
      o_b[i] = std::isinf(lse_b[rh]) ? 0.0 : static_cast<float>(rng.normal());
    }
  }
  std::vector<float> fa(o_a.begin(), o_a.end()), fb(o_b.begin(), o_b.end());
  std::vector<float> la(lse_a.begin(), lse_a.end()), lb(lse_b.begin(), lse_b.end());
  std::vector<double> o_ref = o_a, lse_ref = lse_a;
  if (Status st = merge_partials(heads, head_dim, std::span<double>(o_ref), std::span<double>(lse_ref),
                                 std::span<const double>(o_b), std::span<const double>(lse_b));
      !st)
    return failed(st);
  DeviceBuffer da, db, dla, dlb;
  for (Status st : {da.allocate(fa.size() * 4, "o_a"), db.allocate(fb.size() * 4, "o_b"),
                    dla.allocate(la.size() * 4, "lse_a"), dlb.allocate(lb.size() * 4, "lse_b"),
                    da.upload(fa.data(), "o_a"), db.upload(fb.data(), "o_b"), dla.upload(la.data(), "lse_a"),
                    dlb.upload(lb.data(), "lse_b"),
                    cuda::merge_partials(rows, heads, head_dim, static_cast<float*>(da.get()),
                                         static_cast<float*>(dla.get()), static_cast<const float*>(db.get()),
                                         static_cast<const float*>(dlb.get()), nullptr),
                    cuda::synchronize(nullptr, "check_merge_empty_sides"), da.download(fa.data(), "o_a"),
                    dla.download(la.data(), "lse_a")}) {
    if (!st) return failed(st);
  }
  // Rows where a stays a (b empty) keep their NaN in both; everywhere else NaN is a failure.
  const Tolerance tolerance{1e-6, 1e-5, 0};
  const ElementwiseResult o =
      compare_elementwise("merged O", std::vector<double>(fa.begin(), fa.end()), o_ref, tolerance,
                          static_cast<std::int64_t>(heads) * head_dim);
  const ElementwiseResult l =
      compare_elementwise("merged LSE", std::vector<double>(la.begin(), la.end()), lse_ref, tolerance, heads);
  CheckResult r{o.passed && l.passed, o.worst_ratio, l.worst_ratio, o.detail};
  if (!l.passed) r.detail += (r.detail.empty() ? "" : "; ") + l.detail;
  return r;
}

}  // namespace zb::kernels::gpucheck
