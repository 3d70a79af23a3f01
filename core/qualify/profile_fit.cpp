#include "core/qualify/profile_fit.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <set>

#include "core/common/error.hpp"

namespace zb::qualify {
namespace {

constexpr int kTerms = 3;
using Row = std::array<double, kTerms>;

double rms(const std::vector<double>& values) {
  if (values.empty()) return 0;
  double sum = 0;
  for (const double v : values) sum += v * v;
  return std::sqrt(sum / static_cast<double>(values.size()));
}

// Least squares of Σ t·(x·β / t − 1)² = Σ (x·β − t)² / t over the terms in `used` (the others held at
// 0), by the normal equations (at most three unknowns). Empty when the system is singular.
std::optional<Row> solve_relative(const std::vector<Row>& x, const std::vector<double>& t,
                                  const std::array<bool, kTerms>& used) {
  std::array<std::array<double, kTerms + 1>, kTerms> m{};
  for (std::size_t p = 0; p < x.size(); ++p) {
    for (int i = 0; i < kTerms; ++i) {
      if (!used[i]) continue;
      const double xi = x[p][i] / t[p];
      for (int j = 0; j < kTerms; ++j)
        if (used[j]) m[i][j] += xi * x[p][j];
      m[i][kTerms] += x[p][i];  // right-hand side: Σ x_i/t · t
    }
  }
  for (int i = 0; i < kTerms; ++i)
    if (!used[i]) m[i][i] = 1, m[i][kTerms] = 0;
  for (int c = 0; c < kTerms; ++c) {  // Gauss–Jordan with partial pivoting
    int pivot = c;
    for (int r = c + 1; r < kTerms; ++r)
      if (std::abs(m[r][c]) > std::abs(m[pivot][c])) pivot = r;
    if (std::abs(m[pivot][c]) < 1e-300) return std::nullopt;
    std::swap(m[c], m[pivot]);
    for (int r = 0; r < kTerms; ++r) {
      if (r == c) continue;
      const double f = m[r][c] / m[c][c];
      for (int k = c; k <= kTerms; ++k) m[r][k] -= f * m[c][k];
    }
  }
  Row beta{};
  for (int i = 0; i < kTerms; ++i) beta[i] = m[i][kTerms] / m[i][i];
  return beta;
}

double relative_error(const std::vector<Row>& x, const std::vector<double>& t, const Row& beta) {
  double sum = 0;
  for (std::size_t p = 0; p < x.size(); ++p) {
    double predicted = 0;
    for (int i = 0; i < kTerms; ++i) predicted += x[p][i] * beta[i];
    sum += (predicted - t[p]) * (predicted - t[p]) / t[p];
  }
  return sum;
}

// The non-negative fit with term 0 always in: the best feasible solution over every subset of the rest.
Row fit_non_negative(const std::vector<Row>& x, const std::vector<double>& t,
                     const std::array<bool, kTerms>& allowed) {
  std::optional<Row> best;
  double best_error = std::numeric_limits<double>::infinity();
  for (int mask = 0; mask < (1 << (kTerms - 1)); ++mask) {
    std::array<bool, kTerms> used{true, (mask & 1) != 0 && allowed[1], (mask & 2) != 0 && allowed[2]};
    const std::optional<Row> beta = solve_relative(x, t, used);
    if (!beta || (*beta)[0] <= 0 || (*beta)[1] < 0 || (*beta)[2] < 0) continue;
    const double error = relative_error(x, t, *beta);
    if (error < best_error) best_error = error, best = beta;
  }
  if (!best)
    throw Error(ExitCode::runtime, Location{},
                "calibrate: the measured times admit no fit with a positive rate");
  return *best;
}

Error too_few(const std::string& what) {
  return Error(ExitCode::runtime, Location{}, "calibrate: too few usable measurements to fit " + what,
               "check that the probes ran (a time of 0 or a non-finite one is dropped)");
}

bool usable(double v) {
  return std::isfinite(v) && v > 0;
}

}  // namespace

double FitResiduals::rms_residual() const {
  return rms(residuals);
}

double FitResiduals::weighted_rms_residual() const {
  double sum = 0, weight = 0;
  for (std::size_t i = 0; i < residuals.size() && i < seconds.size(); ++i) {
    sum += seconds[i] * residuals[i] * residuals[i];
    weight += seconds[i];
  }
  return weight > 0 ? std::sqrt(sum / weight) : 0.0;
}

double KernelFit::predict(double flops, double rows, double peak) const {
  return flops / (peak * efficiency * rows / (rows + half_rows)) + overhead;
}

KernelFit fit_kernel(const std::vector<KernelPoint>& points, double peak_flops) {
  std::vector<Row> x;
  std::vector<double> t;
  std::set<double> distinct_rows;
  for (const KernelPoint& p : points) {
    if (!usable(p.flops) || !usable(p.rows) || !usable(p.seconds)) continue;
    x.push_back({p.flops, p.flops / p.rows, 1.0});
    t.push_back(p.seconds);
    distinct_rows.insert(p.rows);
  }
  if (x.empty()) throw too_few("a kernel curve");
  // The shape and overhead terms are told apart only by calls of different sizes.
  const bool several = distinct_rows.size() >= 2;
  const Row beta = fit_non_negative(x, t, {true, several, several});
  KernelFit fit;
  fit.efficiency = 1.0 / (peak_flops * beta[0]);
  fit.half_rows = beta[1] / beta[0];
  fit.overhead = beta[2];
  for (const KernelPoint& p : points)
    if (usable(p.flops) && usable(p.rows) && usable(p.seconds))
      fit.add(fit.predict(p.flops, p.rows, peak_flops) / p.seconds - 1, p.seconds);
  return fit;
}

FactorFit fit_backward_factor(const std::vector<KernelPoint>& backward, const KernelFit& forward,
                              double peak_flops) {
  // t − c = κ·u with u the forward curve's compute time for F, weighted as the curves are (Σ (κu + c −
  // t)²/t): κ = Σ u·(t − c)/t / Σ u²/t.
  double num = 0, den = 0;
  for (const KernelPoint& p : backward) {
    if (!usable(p.flops) || !usable(p.rows) || !usable(p.seconds)) continue;
    const double u = forward.predict(p.flops, p.rows, peak_flops) - forward.overhead;
    num += u * (p.seconds - forward.overhead) / p.seconds;
    den += u * u / p.seconds;
  }
  if (!(den > 0) || !(num > 0)) throw too_few("the backward factor");
  FactorFit fit;
  fit.factor = num / den;
  for (const KernelPoint& p : backward)
    if (usable(p.flops) && usable(p.rows) && usable(p.seconds))
      fit.add(forward.predict(fit.factor * p.flops, p.rows, peak_flops) / p.seconds - 1, p.seconds);
  return fit;
}

LinkFit fit_link(const std::vector<TransferPoint>& points) {
  std::vector<Row> x;
  std::vector<double> t;
  std::set<double> sizes;
  for (const TransferPoint& p : points) {
    if (!usable(p.bytes) || !usable(p.seconds)) continue;
    x.push_back({p.bytes, 1.0, 0.0});  // term 0: 1/B (always in), term 1: latency
    t.push_back(p.seconds);
    sizes.insert(p.bytes);
  }
  if (sizes.size() < 2) throw too_few("a link (two message sizes at least)");
  const Row beta = fit_non_negative(x, t, {true, true, false});
  LinkFit fit;
  fit.bandwidth = 1.0 / beta[0];
  fit.latency = beta[1];
  for (const TransferPoint& p : points)
    if (usable(p.bytes) && usable(p.seconds))
      fit.add((fit.latency + p.bytes / fit.bandwidth) / p.seconds - 1, p.seconds);
  return fit;
}

}  // namespace zb::qualify
