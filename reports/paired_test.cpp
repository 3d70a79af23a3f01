#include "reports/paired_test.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

namespace zb::reports {
namespace {

// The continued fraction of I_x(a, b) (Abramowitz & Stegun 26.5.8), evaluated by the modified Lentz
// method. It converges quickly for x < (a + 1) / (a + b + 2); the caller uses the symmetry
// I_x(a, b) = 1 − I_{1−x}(b, a) for the other side.
double beta_continued_fraction(double x, double a, double b) {
  constexpr int max_terms = 500;
  constexpr double epsilon = 1e-15;
  constexpr double tiny = 1e-300;  // keeps a vanishing denominator from dividing by zero
  auto guarded = [](double v) { return std::fabs(v) < tiny ? tiny : v; };
  double c = 1;
  double d = 1 / guarded(1 - (a + b) * x / (a + 1));
  double fraction = d;
  for (int m = 1; m <= max_terms; ++m) {
    const double md = m;
    const double even = md * (b - md) * x / ((a + 2 * md - 1) * (a + 2 * md));
    d = 1 / guarded(1 + even * d);
    c = guarded(1 + even / c);
    fraction *= d * c;
    const double odd = -(a + md) * (a + b + md) * x / ((a + 2 * md) * (a + 2 * md + 1));
    d = 1 / guarded(1 + odd * d);
    c = guarded(1 + odd / c);
    const double step = d * c;
    fraction *= step;
    if (std::fabs(step - 1) < epsilon) break;
  }
  return fraction;
}

}  // namespace

double regularized_incomplete_beta(double x, double a, double b) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double log_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  if (x < (a + 1) / (a + b + 2)) return std::exp(log_front) * beta_continued_fraction(x, a, b) / a;
  return 1 - std::exp(log_front) * beta_continued_fraction(1 - x, b, a) / b;
}

double student_t_two_sided_p(double t, double degrees_of_freedom) {
  if (std::isnan(t)) return 1;
  if (std::isinf(t)) return 0;
  const double nu = degrees_of_freedom;
  return regularized_incomplete_beta(nu / (nu + t * t), nu / 2, 0.5);
}

PairedTestResult paired_log_ratio_t_test(const std::vector<double>& base,
                                         const std::vector<double>& candidate) {
  PairedTestResult result;
  const std::size_t n = std::min(base.size(), candidate.size());
  result.pairs = static_cast<int>(n);
  if (n < 2) return result;
  std::vector<double> log_ratios;
  log_ratios.reserve(n);
  for (std::size_t i = 0; i < n; ++i) log_ratios.push_back(std::log(candidate[i] / base[i]));
  double sum = 0;
  for (const double r : log_ratios) sum += r;
  const auto count = static_cast<double>(n);
  result.mean_log_ratio = sum / count;
  double squares = 0;
  for (const double r : log_ratios) squares += (r - result.mean_log_ratio) * (r - result.mean_log_ratio);
  result.sd_log_ratio = std::sqrt(squares / (count - 1));
  // Below this the spread is rounding in the simulator's sums, not a difference between batches.
  constexpr double spread_resolution = 1e-12;
  if (result.sd_log_ratio <= spread_resolution) {
    const bool unchanged = std::fabs(result.mean_log_ratio) <= spread_resolution;
    result.sd_log_ratio = 0;
    result.t =
        unchanged ? 0.0 : std::copysign(std::numeric_limits<double>::infinity(), result.mean_log_ratio);
    result.p_value = unchanged ? 1.0 : 0.0;
    return result;
  }
  result.t = result.mean_log_ratio / (result.sd_log_ratio / std::sqrt(count));
  result.p_value = student_t_two_sided_p(result.t, count - 1);
  return result;
}

double student_t_critical_value(double alpha, double degrees_of_freedom) {
  // P(|T| ≥ q) falls from 1 at q = 0 towards 0: widen the bracket until it holds alpha, then halve it.
  double low = 0, high = 1;
  while (student_t_two_sided_p(high, degrees_of_freedom) > alpha && high < 1e12) high *= 2;
  for (int step = 0; step < 200 && high - low > 1e-13 * high; ++step) {
    const double middle = 0.5 * (low + high);
    (student_t_two_sided_p(middle, degrees_of_freedom) > alpha ? low : high) = middle;
  }
  return 0.5 * (low + high);
}

std::optional<RatioInterval> paired_ratio_interval(const std::vector<double>& denominator,
                                                   const std::vector<double>& numerator, double alpha) {
  const PairedTestResult test = paired_log_ratio_t_test(denominator, numerator);
  if (test.pairs < 2) return std::nullopt;
  RatioInterval out;
  out.pairs = test.pairs;
  out.p_value = test.p_value;
  out.significant = test.p_value < alpha;
  // The test calls a spread below its resolution none, and a mean within it no change: the interval then
  // is the ratio itself, exactly 1 for no change.
  const double mean = test.p_value == 1 && test.sd_log_ratio == 0 ? 0.0 : test.mean_log_ratio;
  const double half = test.sd_log_ratio == 0
                          ? 0.0
                          : student_t_critical_value(alpha, test.pairs - 1) * test.sd_log_ratio /
                                std::sqrt(static_cast<double>(test.pairs));
  out.geometric_mean = std::exp(mean);
  out.low = std::exp(mean - half);
  out.high = std::exp(mean + half);
  return out;
}

}  // namespace zb::reports
