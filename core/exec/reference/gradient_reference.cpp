#include "core/exec/reference/gradient_reference.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace zb::reference {
namespace {

constexpr double kUnitRoundoff = 0x1.0p-24;  // float32, the storage and accumulation type of the run
constexpr std::int64_t kTile = 256;          // rows of the other side generated at a time

struct Dims {
  std::size_t heads, kv_heads, head_dim, q_width, kv_width, group;
  double scale;
};

Dims dims_of(const AttentionDims& d) {
  const auto heads = static_cast<std::size_t>(d.heads), kv_heads = static_cast<std::size_t>(d.kv_heads);
  const auto head_dim = static_cast<std::size_t>(d.head_dim);
  return {heads,
          kv_heads,
          head_dim,
          heads * head_dim,
          kv_heads * head_dim,
          heads / kv_heads,
          1.0 / std::sqrt(static_cast<double>(d.head_dim))};
}

std::vector<double> generate(const QkvGenerator& gen, QkvTensor t, int seq, std::int64_t begin,
                             std::int64_t end, std::size_t width) {
  std::vector<double> rows(static_cast<std::size_t>(end - begin) * width);
  gen.fill(t, seq, begin, end, std::span<double>(rows));
  return rows;
}

// What every (query, key) pair of the backward needs, from the row statistics: P, dS and the magnitude
// M = scale·P·(Σ|dO·v| + e) that the bound of dS scales with.
struct Pair {
  double p, ds, m;
};

inline Pair pair_terms(const double* q, const double* k, const double* v, const double* d_o, std::size_t d,
                       double scale, double lse, double big_d, double e) {
  double dot = 0, dp = 0, b = 0;
  for (std::size_t c = 0; c < d; ++c) {
    dot += q[c] * k[c];
    dp += d_o[c] * v[c];
    b += std::abs(d_o[c] * v[c]);
  }
  const double p = std::exp(dot * scale - lse);
  return {p, p * (dp - big_d), scale * p * (b + e)};
}

// Calls fn(t, h, k_j, v_j) for every query row begin + t of [begin, end), query head h and key j of its
// causal prefix [0, begin + t], K and V generated one tile at a time (k_j, v_j: the kv head h reads).
template <typename Fn>
void for_each_prefix_key(const QkvGenerator& gen, const Dims& g, int seq, std::int64_t begin,
                         std::int64_t end, Fn&& fn) {
  for (std::int64_t k0 = 0; k0 < end; k0 += kTile) {
    const std::int64_t k1 = std::min(end, k0 + kTile);
    const std::vector<double> k = generate(gen, QkvTensor::k, seq, k0, k1, g.kv_width);
    const std::vector<double> v = generate(gen, QkvTensor::v, seq, k0, k1, g.kv_width);
    for (std::int64_t i = std::max(begin, k0); i < end; ++i) {  // rows before k0 see none of the tile
      for (std::size_t h = 0; h < g.heads; ++h) {
        for (std::int64_t j = k0; j < std::min(k1, i + 1); ++j) {
          const std::size_t at = static_cast<std::size_t>(j - k0) * g.kv_width + (h / g.group) * g.head_dim;
          fn(static_cast<std::size_t>(i - begin), h, &k[at], &v[at]);
        }
      }
    }
  }
}

// One query row's terms into one key row's dK and dV and their bounds (separate arrays, never aliased).
void accumulate(std::size_t d, double* __restrict dk, double* __restrict dk_bound, double* __restrict dv,
                double* __restrict dv_bound, const double* __restrict q, const double* __restrict d_o,
                double dk_weight, double dk_bound_weight, double dv_weight, double dv_bound_weight) {
  for (std::size_t c = 0; c < d; ++c) {
    dk[c] += dk_weight * q[c];
    dk_bound[c] += dk_bound_weight * std::abs(q[c]);
    dv[c] += dv_weight * d_o[c];
    dv_bound[c] += dv_bound_weight * std::abs(d_o[c]);
  }
}

}  // namespace

GradientReference::GradientReference(const lower::Program& program, const QkvGenerator& generator)
    : program_(program), generator_(generator) {
  for (std::size_t s = 0; s < program.sequences.size(); ++s)
    blocks_per_row_[static_cast<int>(s)].assign(static_cast<std::size_t>(program.sequences[s].length), 0);
  for (const lower::RankProgram& rank : program.ranks) {
    for (int id = 0; id < rank.first_backward; ++id) {
      const lower::Instr& in = rank.instrs[static_cast<std::size_t>(id)];
      if (in.kind != lower::InstrKind::attention) continue;
      for (const layout::AttentionBlock& b : lower::attention_blocks(program, rank.rank, in)) {
        const auto it = blocks_per_row_.find(b.seq);
        if (it == blocks_per_row_.end()) continue;
        for (std::int64_t i = std::max<std::int64_t>(0, b.q0);
             i < std::min<std::int64_t>(b.q1, static_cast<std::int64_t>(it->second.size())); ++i)
          ++it->second[static_cast<std::size_t>(i)];
      }
    }
  }
}

GradientReference::~GradientReference() = default;

void GradientReference::insert(int seq, std::int64_t begin, const RowStatistics& rows) {
  const auto heads = static_cast<std::size_t>(generator_.dims().heads);
  const std::lock_guard lock(mutex_);
  Entry& entry = entries_[seq];
  if (entry.stats.lse.empty()) {
    const auto size =
        static_cast<std::size_t>(program_.sequences.at(static_cast<std::size_t>(seq)).length) * heads;
    for (auto* v : {&entry.stats.lse, &entry.stats.d, &entry.stats.e, &entry.stats.eps_p, &entry.stats.eps_s})
      v->assign(size, 0.0);
  }
  const auto at = static_cast<std::size_t>(begin) * heads;
  if (at + rows.lse.size() > entry.stats.lse.size())
    throw std::logic_error("row statistics of sequence " + std::to_string(seq) + " beyond its length");
  const std::pair<std::vector<double>*, const std::vector<double>*> parts[] = {
      {&entry.stats.lse, &rows.lse},
      {&entry.stats.d, &rows.d},
      {&entry.stats.e, &rows.e},
      {&entry.stats.eps_p, &rows.eps_p},
      {&entry.stats.eps_s, &rows.eps_s}};
  for (const auto& [into, from] : parts)
    std::copy(from->begin(), from->end(), into->begin() + static_cast<std::ptrdiff_t>(at));
  entry.inserted += static_cast<std::int64_t>(rows.lse.size() / heads);
}

const RowStatistics& GradientReference::statistics(int seq) const {
  const std::lock_guard lock(mutex_);
  const auto it = entries_.find(seq);
  const std::int64_t length = program_.sequences.at(static_cast<std::size_t>(seq)).length;
  if (it == entries_.end() || it->second.inserted != length) {
    throw std::logic_error("the row statistics of sequence " + std::to_string(seq) + " cover " +
                           std::to_string(it == entries_.end() ? 0 : it->second.inserted) + " of its " +
                           std::to_string(length) + " rows (the ranks' linear layouts must tile it)");
  }
  return it->second.stats;
}

RowStatistics GradientReference::compute(int seq, std::int64_t begin, std::int64_t end) const {
  const Dims g = dims_of(generator_.dims());
  const std::vector<int>& blocks = blocks_per_row_.at(seq);
  const double u = kUnitRoundoff, d = static_cast<double>(g.head_dim);
  RowStatistics st;
  const auto n_rh = static_cast<std::size_t>(end - begin) * g.heads;
  for (auto* v : {&st.lse, &st.d, &st.e, &st.eps_p, &st.eps_s}) v->assign(n_rh, 0.0);
  for (std::int64_t i0 = begin; i0 < end; i0 += kTile) {
    const std::int64_t i1 = std::min(end, i0 + kTile);
    const auto rows = static_cast<std::size_t>(i1 - i0);
    const std::vector<double> q = generate(generator_, QkvTensor::q, seq, i0, i1, g.q_width);
    const std::vector<double> d_o = generate(generator_, QkvTensor::d_o, seq, i0, i1, g.q_width);
    std::vector<double> o(rows * g.q_width, 0.0), o_abs(o.size(), 0.0), sum(rows * g.heads, 0.0),
        shift(sum.size(), 0.0), logit(sum.size(), 0.0);
    // The fixed shift of verification.cpp: scale·Σ|q| bounds every logit (|k| < 1), one pass suffices.
    for (std::size_t rh = 0; rh < rows * g.heads; ++rh)
      for (std::size_t c = 0; c < g.head_dim; ++c) shift[rh] += g.scale * std::abs(q[rh * g.head_dim + c]);
    for_each_prefix_key(generator_, g, seq, i0, i1,
                        [&](std::size_t t, std::size_t h, const double* kj, const double* vj) {
                          const std::size_t rh = t * g.heads + h;
                          const double* qi = &q[rh * g.head_dim];
                          double dot = 0, mag = 0;
                          for (std::size_t c = 0; c < g.head_dim; ++c) {
                            dot += qi[c] * kj[c];
                            mag += std::abs(qi[c] * kj[c]);
                          }
                          logit[rh] = std::max(logit[rh], g.scale * mag);
                          const double w = std::exp(dot * g.scale - shift[rh]);
                          sum[rh] += w;
                          for (std::size_t c = 0; c < g.head_dim; ++c) {
                            o[rh * g.head_dim + c] += w * vj[c];
                            o_abs[rh * g.head_dim + c] += w * std::abs(vj[c]);
                          }
                        });
    for (std::size_t rh = 0; rh < rows * g.heads; ++rh) {
      if (!(sum[rh] > 0) || !std::isfinite(sum[rh]))
        throw std::logic_error("the float64 backward reference's softmax sum of sequence " +
                               std::to_string(seq) + " left the double range; the fixed shift needs |K| < 1");
      const std::size_t row = static_cast<std::size_t>(i0 - begin) * g.heads + rh;
      const double lse = shift[rh] + std::log(sum[rh]);
      double big_d = 0, e = 0;
      for (std::size_t c = 0; c < g.head_dim; ++c) {
        big_d += d_o[rh * g.head_dim + c] * o[rh * g.head_dim + c] / sum[rh];
        e += std::abs(d_o[rh * g.head_dim + c]) * o_abs[rh * g.head_dim + c] / sum[rh];
      }
      // docs/REFERENCE.md, "Backward tolerance": n keys, A the largest logit magnitude, L the LSE; b forward
      // blocks merged into the row, each a rescale like the kernel's own (ε_L) and two weights (ε_O).
      const double n = static_cast<double>(i0) + static_cast<double>(rh / g.heads) + 1;
      const double a = logit[rh], l = std::abs(lse);
      const double merges = blocks[static_cast<std::size_t>(i0) + rh / g.heads];
      const double rescale = u * (l + 4 * a + 4);
      const double eps_s = (d + 3) * u * a;
      const double eps_l = eps_s + (2 * n + 6) * u + u * (l + 4 * a) + merges * rescale;
      const double eps_p = eps_s + eps_l + u * (l + a) + 2 * u;
      const double eps_o = 2 * eps_p + (n + 4) * u + merges * 3 * u;
      st.lse[row] = lse;
      st.d[row] = big_d;
      st.e[row] = e;
      st.eps_p[row] = eps_p;
      st.eps_s[row] = eps_p + eps_o + (d + 5) * u;
    }
  }
  return st;
}

ReferenceGradient GradientReference::dq(int seq, std::int64_t begin, std::int64_t end) const {
  const Dims g = dims_of(generator_.dims());
  const RowStatistics& st = statistics(seq);
  const double u = kUnitRoundoff;
  const auto rows = static_cast<std::size_t>(end - begin);
  const std::vector<double> q = generate(generator_, QkvTensor::q, seq, begin, end, g.q_width);
  const std::vector<double> d_o = generate(generator_, QkvTensor::d_o, seq, begin, end, g.q_width);
  ReferenceGradient out;
  out.value.assign(rows * g.q_width, 0.0);
  std::vector<double> mag(out.value.size(), 0.0);  // Σ_j M_ij |k_jc|
  for_each_prefix_key(
      generator_, g, seq, begin, end, [&](std::size_t t, std::size_t h, const double* kj, const double* vj) {
        const std::size_t rh = t * g.heads + h, row = (static_cast<std::size_t>(begin) + t) * g.heads + h;
        const Pair pr = pair_terms(&q[rh * g.head_dim], kj, vj, &d_o[rh * g.head_dim], g.head_dim, g.scale,
                                   st.lse[row], st.d[row], st.e[row]);
        for (std::size_t c = 0; c < g.head_dim; ++c) {
          out.value[rh * g.head_dim + c] += g.scale * pr.ds * kj[c];
          mag[rh * g.head_dim + c] += pr.m * std::abs(kj[c]);
        }
      });
  out.bound.resize(out.value.size());
  for (std::size_t t = 0; t < rows; ++t) {
    for (std::size_t h = 0; h < g.heads; ++h) {
      const std::size_t rh = t * g.heads + h, row = (static_cast<std::size_t>(begin) + t) * g.heads + h;
      const double n = static_cast<double>(begin) + static_cast<double>(t) + 1;
      for (std::size_t c = 0; c < g.head_dim; ++c)
        out.bound[rh * g.head_dim + c] = (st.eps_s[row] + (n + 2) * u) * mag[rh * g.head_dim + c];
    }
  }
  return out;
}

std::pair<ReferenceGradient, ReferenceGradient> GradientReference::dkv(int seq, std::int64_t begin,
                                                                       std::int64_t end) const {
  const Dims g = dims_of(generator_.dims());
  const RowStatistics& st = statistics(seq);
  const double u = kUnitRoundoff;
  const std::int64_t length = program_.sequences.at(static_cast<std::size_t>(seq)).length;
  const auto rows = static_cast<std::size_t>(end - begin);
  const std::vector<double> k = generate(generator_, QkvTensor::k, seq, begin, end, g.kv_width);
  const std::vector<double> v = generate(generator_, QkvTensor::v, seq, begin, end, g.kv_width);
  ReferenceGradient dk, dv;
  for (ReferenceGradient* r : {&dk, &dv}) {
    r->value.assign(rows * g.kv_width, 0.0);
    r->bound.assign(rows * g.kv_width, 0.0);
  }
  for (std::int64_t i0 = begin; i0 < length; i0 += kTile) {
    const std::int64_t i1 = std::min(length, i0 + kTile);
    const std::vector<double> q = generate(generator_, QkvTensor::q, seq, i0, i1, g.q_width);
    const std::vector<double> d_o = generate(generator_, QkvTensor::d_o, seq, i0, i1, g.q_width);
    for (std::int64_t i = i0; i < i1; ++i) {
      const auto t = static_cast<std::size_t>(i - i0);
      for (std::size_t h = 0; h < g.heads; ++h) {
        const std::size_t rh = t * g.heads + h, row = static_cast<std::size_t>(i) * g.heads + h;
        const double* qi = &q[rh * g.head_dim];
        const double* doi = &d_o[rh * g.head_dim];
        for (std::int64_t j = begin; j < std::min(end, i + 1); ++j) {
          const std::size_t at =
              static_cast<std::size_t>(j - begin) * g.kv_width + (h / g.group) * g.head_dim;
          const Pair pr =
              pair_terms(qi, &k[at], &v[at], doi, g.head_dim, g.scale, st.lse[row], st.d[row], st.e[row]);
          // The bounds of docs/REFERENCE.md: dK Σ ε_S,i·M_ij|q_ic| + (m_j + 1)·u·Σ M_ij|q_ic|, dV the same
          // with ε_P,i + u and P_ij|dO_ic|; m_j (the terms of key j's sum) is fixed per key, so one sum each.
          const double m = static_cast<double>(length - j) * static_cast<double>(g.group);
          accumulate(g.head_dim, &dk.value[at], &dk.bound[at], &dv.value[at], &dv.bound[at], qi, doi,
                     g.scale * pr.ds, (st.eps_s[row] + (m + 1) * u) * pr.m, pr.p,
                     (st.eps_p[row] + u + (m + 1) * u) * pr.p);
        }
      }
    }
  }
  return {std::move(dk), std::move(dv)};
}

}  // namespace zb::reference
