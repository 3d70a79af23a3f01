#include "reports/sample_statistics.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>

namespace zb::reports {

SampleAggregates aggregate(const std::vector<double>& samples) {
  SampleAggregates out;
  if (samples.empty()) return out;
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  out.count = static_cast<int>(n);
  // Summing in ascending order makes the figure independent of the order iterations were listed in.
  out.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(n);
  double squares = 0;
  for (const double v : sorted) squares += (v - out.mean) * (v - out.mean);
  out.sd = n > 1 ? std::sqrt(squares / static_cast<double>(n - 1)) : 0.0;
  out.min = sorted.front();
  out.max = sorted.back();
  out.median = n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  return out;
}

namespace {

// Number of orderings of m x's and n y's for each value of U (the count of (x, y) pairs with x > y):
// the coefficients of the Gaussian binomial [m+n choose m]. Recurrence on the largest value overall: it is
// either an x (which beats all n y's) or a y (which beats nothing). Counts fit in uint64 for m, n ≤ 20.
std::vector<std::uint64_t> u_null_counts(int m, int n) {
  const auto width = static_cast<std::size_t>(n + 1);
  // table[i * width + j] = counts for (i x's, j y's).
  std::vector<std::vector<std::uint64_t>> table(static_cast<std::size_t>(m + 1) * width);
  for (int i = 0; i <= m; ++i) {
    for (int j = 0; j <= n; ++j) {
      std::vector<std::uint64_t>& counts =
          table[static_cast<std::size_t>(i) * width + static_cast<std::size_t>(j)];
      counts.assign(static_cast<std::size_t>(i * j + 1), 0);
      if (i == 0 || j == 0) {
        counts[0] = 1;
        continue;
      }
      const auto& x_largest = table[static_cast<std::size_t>(i - 1) * width + static_cast<std::size_t>(j)];
      const auto& y_largest = table[static_cast<std::size_t>(i) * width + static_cast<std::size_t>(j - 1)];
      for (std::size_t u = 0; u < x_largest.size(); ++u)
        counts[u + static_cast<std::size_t>(j)] += x_largest[u];
      for (std::size_t u = 0; u < y_largest.size(); ++u) counts[u] += y_largest[u];
    }
  }
  return table.back();
}

double exact_two_sided_p(double u_larger, int m, int n) {
  const std::vector<std::uint64_t> counts = u_null_counts(m, n);
  double total = 0;
  double at_least = 0;
  for (std::size_t u = 0; u < counts.size(); ++u) {
    total += static_cast<double>(counts[u]);
    if (static_cast<double>(u) >= u_larger) at_least += static_cast<double>(counts[u]);
  }
  return std::min(1.0, 2.0 * at_least / total);
}

}  // namespace

MannWhitneyResult mann_whitney_u(const std::vector<double>& first, const std::vector<double>& second) {
  MannWhitneyResult result;
  const auto m = static_cast<int>(first.size());
  const auto n = static_cast<int>(second.size());
  if (m == 0 || n == 0) return result;

  // Midranks of the pooled sample; tie groups also feed the variance correction.
  std::vector<std::pair<double, int>> pooled;  // (value, 0 = first, 1 = second)
  for (const double v : first) pooled.emplace_back(v, 0);
  for (const double v : second) pooled.emplace_back(v, 1);
  std::sort(pooled.begin(), pooled.end());
  double rank_sum_first = 0;
  double tie_term = 0;  // Σ (t³ − t) over tie groups
  for (std::size_t i = 0; i < pooled.size();) {
    std::size_t j = i;
    while (j < pooled.size() && pooled[j].first == pooled[i].first) ++j;
    const double midrank = 0.5 * static_cast<double>(i + 1 + j);  // ranks i+1 … j
    for (std::size_t k = i; k < j; ++k) {
      if (pooled[k].second == 0) rank_sum_first += midrank;
    }
    const auto t = static_cast<double>(j - i);
    tie_term += t * t * t - t;
    if (j - i > 1) result.ties = true;
    i = j;
  }
  const double md = m;
  const double nd = n;
  result.u = rank_sum_first - md * (md + 1) / 2;
  const double u_larger = std::max(result.u, md * nd - result.u);

  if (!result.ties && m <= exact_u_test_max_size && n <= exact_u_test_max_size) {
    result.method = UTestMethod::exact;
    result.p_value = exact_two_sided_p(u_larger, m, n);
    return result;
  }
  result.method = UTestMethod::normal;
  const double total = md + nd;
  const double variance = md * nd / 12.0 * ((total + 1) - tie_term / (total * (total - 1)));
  if (!(variance > 0)) {  // every value equal: no evidence of any difference
    result.p_value = 1;
    return result;
  }
  const double z = (u_larger - md * nd / 2 - 0.5) / std::sqrt(variance);
  result.p_value = std::clamp(std::erfc(z / std::sqrt(2.0)), 0.0, 1.0);  // 2 · (1 − Φ(z))
  return result;
}

double smallest_exact_p_value(int first_size, int second_size) {
  if (first_size <= 0 || second_size <= 0) return 1.0;
  // 1 / C(m+n, m), computed as a running product to stay in range.
  double inverse_binomial = 1;
  for (int k = 1; k <= first_size; ++k) inverse_binomial *= static_cast<double>(k) / (second_size + k);
  return std::min(1.0, 2.0 * inverse_binomial);
}

const char* to_string(UTestMethod method) {
  return method == UTestMethod::exact ? "exact" : "normal";
}

}  // namespace zb::reports
