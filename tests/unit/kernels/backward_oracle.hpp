#pragma once
// The float64 oracle of attention backward, written independently of the kernels: per output row it
// gathers every key the row's blocks name, takes the full softmax, and backpropagates dO through it
// with the softmax Jacobian J_kj = ∂p_k/∂s_j = p_k (δ_kj − p_j) written out term by term. It never uses
// the saved LSE nor D = rowsum(dO ∘ O), which is what the kernel's recurrence relies on.
//
// Alongside each gradient element it accumulates the first-order bound on the rounding error of a
// kernel that works in unit roundoff u, as derived in docs/REFERENCE.md ("Backward tolerance"): the
// error of each term of the kernel's sums times that term's magnitude, plus u per addition of the
// sum. The kernel tests hold every element to it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <span>
#include <stdexcept>
#include <vector>

#include "kernel_test_support.hpp"

namespace zb::kernels::testing {

struct BackwardOracle {
  std::vector<double> o, lse;      // forward over all the keys of each named row; NaN elsewhere
  std::vector<double> dq, dk, dv;  // gradients of Σ dO ∘ O, shaped like q, k, v
  std::vector<double> dq_bound, dk_bound, dv_bound;  // per element rounding-error bound at unit roundoff u
};

namespace oracle_detail {

// One output row: the query it belongs to and every key row it sees, over all blocks naming it.
struct RowKeys {
  std::int64_t q_row = -1;
  std::vector<std::int64_t> kv_rows;
};

inline std::map<std::int64_t, RowKeys> keys_by_out_row(std::span<const AttentionBlockDesc> blocks) {
  std::map<std::int64_t, RowKeys> rows;
  for (const AttentionBlockDesc& b : blocks) {
    for (std::int64_t i = 0; i < b.q_count; ++i) {
      RowKeys& row = rows[b.out_row + i];
      if (row.q_row >= 0 && row.q_row != b.q_row + i)
        throw std::logic_error("out row named for two query rows");
      row.q_row = b.q_row + i;
      for (std::int64_t j = 0; j < b.kv_count; ++j) {
        if (b.mask == AttentionMask::full || b.kv_position + j <= b.q_position + i)
          row.kv_rows.push_back(b.kv_row + j);
      }
    }
  }
  return rows;
}

inline double abs_dot(const double* a, const double* b, std::int64_t n) {
  double sum = 0;
  for (std::int64_t c = 0; c < n; ++c) sum += std::abs(a[c] * b[c]);
  return sum;
}

}  // namespace oracle_detail

inline BackwardOracle backward_oracle(const AttentionShape& shape, std::span<const AttentionBlockDesc> blocks,
                                      const AttentionInputs& in, std::span<const double> d_out, double u) {
  const std::int64_t d = shape.head_dim, heads = shape.heads, kv_heads = shape.kv_heads;
  const std::int64_t group = heads / kv_heads;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  BackwardOracle r;
  r.o.assign(static_cast<std::size_t>(shape.out_rows * heads * d), nan);
  r.lse.assign(static_cast<std::size_t>(shape.out_rows * heads), nan);
  r.dq.assign(in.q.size(), 0.0);
  r.dq_bound = r.dq;
  r.dk.assign(in.k.size(), 0.0);
  r.dv = r.dk;
  std::vector<double> dk_weighted(in.k.size(), 0.0), dk_mag(in.k.size(), 0.0);  // Σ ε_S·|term|, Σ |term|
  std::vector<double> dv_weighted(in.k.size(), 0.0), dv_mag(in.k.size(), 0.0);
  std::vector<double> terms(static_cast<std::size_t>(shape.kv_tokens * kv_heads),
                            0.0);  // m_j per kv row/head

  for (const auto& [out_row, row] : oracle_detail::keys_by_out_row(blocks)) {
    const std::int64_t n = static_cast<std::int64_t>(row.kv_rows.size());
    for (std::int64_t h = 0; h < heads; ++h) {
      const double* q = in.q.data() + (row.q_row * heads + h) * d;
      const double* d_o = d_out.data() + (out_row * heads + h) * d;
      double* o = r.o.data() + (out_row * heads + h) * d;
      const auto kv_at = [&](std::int64_t j) {
        return (row.kv_rows[static_cast<std::size_t>(j)] * kv_heads + h / group) * d;
      };
      std::fill(o, o + d, 0.0);
      if (n == 0) {  // a row that sees no key: O = 0, nothing to backpropagate
        r.lse[static_cast<std::size_t>(out_row * heads + h)] = -std::numeric_limits<double>::infinity();
        continue;
      }
      std::vector<double> s(static_cast<std::size_t>(n)), p(s.size()), dp(s.size()), ds(s.size());
      double logit_scale = 0;  // A: the largest scale·Σ|q_c k_c|, what a logit's rounding error scales with
      for (std::int64_t j = 0; j < n; ++j) {
        const double* k = in.k.data() + kv_at(j);
        double dot = 0;
        for (std::int64_t c = 0; c < d; ++c) dot += q[c] * k[c];
        s[static_cast<std::size_t>(j)] = dot * scale;
        logit_scale = std::max(logit_scale, scale * oracle_detail::abs_dot(q, k, d));
      }
      const double max = *std::ranges::max_element(s);
      double sum = 0;
      for (double x : s) sum += std::exp(x - max);
      const double lse = max + std::log(sum);
      r.lse[static_cast<std::size_t>(out_row * heads + h)] = lse;
      std::vector<double> o_abs(static_cast<std::size_t>(d), 0.0);  // Ō_c = Σ_j p_j |v_jc|
      for (std::int64_t j = 0; j < n; ++j) {
        const double* v = in.v.data() + kv_at(j);
        p[static_cast<std::size_t>(j)] = std::exp(s[static_cast<std::size_t>(j)] - max) / sum;
        double dot = 0;
        for (std::int64_t c = 0; c < d; ++c) {
          o[c] += p[static_cast<std::size_t>(j)] * v[c];
          o_abs[static_cast<std::size_t>(c)] += p[static_cast<std::size_t>(j)] * std::abs(v[c]);
          dot += d_o[c] * v[c];
        }
        dp[static_cast<std::size_t>(j)] = dot;  // ∂L/∂p_j
      }
      // dS_j = Σ_k J_kj dP_k: the chain rule through the softmax, one Jacobian entry at a time.
      for (std::int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (std::int64_t kk = 0; kk < n; ++kk) {
          const double jacobian =
              p[static_cast<std::size_t>(kk)] * ((kk == j ? 1.0 : 0.0) - p[static_cast<std::size_t>(j)]);
          acc += jacobian * dp[static_cast<std::size_t>(kk)];
        }
        ds[static_cast<std::size_t>(j)] = acc;
      }

      // Error budget of this (row, head), docs/REFERENCE.md: logit ε_s, forward LSE ε_L, P ε_P, O ε_O,
      // dS ε_S (relative to its magnitude M_j = scale·P_j·(b_j + e)).
      const double nd = static_cast<double>(n), dd = static_cast<double>(d);
      const double eps_s = (dd + 3) * u * logit_scale;
      const double eps_l = eps_s + (2 * nd + 6) * u + u * (std::abs(lse) + 4 * logit_scale);
      const double eps_p = eps_s + eps_l + u * (std::abs(lse) + logit_scale) + 2 * u;
      const double eps_o = 2 * eps_p + (nd + 4) * u;
      const double eps_ds = eps_p + eps_o + (dd + 5) * u;
      const double e = oracle_detail::abs_dot(d_o, o_abs.data(), d);  // bounds |D| and carries O's error
      double* dq = r.dq.data() + (row.q_row * heads + h) * d;
      double* dq_bound = r.dq_bound.data() + (row.q_row * heads + h) * d;
      for (std::int64_t j = 0; j < n; ++j) {
        const std::int64_t kv = kv_at(j);
        const double* k = in.k.data() + kv;
        const double pj = p[static_cast<std::size_t>(j)];
        const double ds_mag = scale * pj * (oracle_detail::abs_dot(d_o, in.v.data() + kv, d) + e);
        terms[static_cast<std::size_t>(kv / d)] += 1;
        for (std::int64_t c = 0; c < d; ++c) {
          const std::size_t at = static_cast<std::size_t>(kv + c);
          dq[c] += scale * ds[static_cast<std::size_t>(j)] * k[c];
          dq_bound[c] += (eps_ds + (nd + 2) * u) * ds_mag * std::abs(k[c]);
          r.dk[at] += scale * ds[static_cast<std::size_t>(j)] * q[c];
          dk_weighted[at] += eps_ds * ds_mag * std::abs(q[c]);
          dk_mag[at] += ds_mag * std::abs(q[c]);
          r.dv[at] += pj * d_o[c];
          dv_weighted[at] += (eps_p + u) * pj * std::abs(d_o[c]);
          dv_mag[at] += pj * std::abs(d_o[c]);
        }
      }
    }
  }
  // dK/dV sum m_j terms (the (query, head) pairs that see key j): u per addition on top of each term's own
  // error.
  r.dk_bound.resize(in.k.size());
  r.dv_bound.resize(in.k.size());
  for (std::size_t at = 0; at < in.k.size(); ++at) {
    const double m = terms[at / static_cast<std::size_t>(d)];
    r.dk_bound[at] = dk_weighted[at] + (m + 1) * u * dk_mag[at];
    r.dv_bound[at] = dv_weighted[at] + (m + 1) * u * dv_mag[at];
  }
  return r;
}

// Largest |got − want| / bound over the elements (0 where both are 0); > 1 means the bound is broken.
// NaN in `got` gives infinity.
template <typename A>
double worst_bound_ratio(std::span<const A> got, std::span<const double> want,
                         std::span<const double> bound) {
  double worst = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double err = std::abs(static_cast<double>(got[i]) - want[i]);
    if (std::isnan(err)) return std::numeric_limits<double>::infinity();
    if (err == 0) continue;
    worst = std::max(worst, bound[i] > 0 ? err / bound[i] : std::numeric_limits<double>::infinity());
  }
  return worst;
}

}  // namespace zb::kernels::testing
