#include "core/workload/stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace zb {

double quantile_of_sorted(std::span<const std::int64_t> sorted, double p) {
  const double h = static_cast<double>(sorted.size() - 1) * std::clamp(p, 0.0, 1.0);
  const auto below = static_cast<std::size_t>(std::floor(h));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  const auto low = static_cast<double>(sorted[below]);
  return low + (h - static_cast<double>(below)) * (static_cast<double>(sorted[above]) - low);
}

LengthStats compute_length_stats(std::span<const std::int64_t> lengths,
                                 std::span<const std::int64_t> thresholds) {
  LengthStats stats;
  for (const auto t : thresholds) stats.above.push_back({.threshold = t});
  if (lengths.empty()) return stats;

  std::vector<std::int64_t> sorted(lengths.begin(), lengths.end());
  std::sort(sorted.begin(), sorted.end());
  stats.count = static_cast<std::int64_t>(sorted.size());
  stats.min = sorted.front();
  stats.max = sorted.back();

  // Σs² overflows 64-bit integers for a few million-token documents, so the sums are in double: the
  // shares are ratios and need no more than double precision.
  double total_tokens = 0;
  double total_squares = 0;
  std::vector<double> tokens_above(thresholds.size(), 0.0);
  std::vector<double> squares_above(thresholds.size(), 0.0);
  std::vector<std::int64_t> count_above(thresholds.size(), 0);
  for (const auto s : sorted) {
    stats.total_tokens += s;
    const auto length = static_cast<double>(s);
    total_tokens += length;
    total_squares += length * length;
    for (std::size_t i = 0; i < thresholds.size(); ++i) {
      if (s > thresholds[i]) {
        ++count_above[i];
        tokens_above[i] += length;
        squares_above[i] += length * length;
      }
    }
  }
  stats.mean = total_tokens / static_cast<double>(stats.count);
  for (std::size_t i = 0; i < thresholds.size(); ++i) {
    stats.above[i].sequences = static_cast<double>(count_above[i]) / static_cast<double>(stats.count);
    stats.above[i].tokens = tokens_above[i] / total_tokens;
    stats.above[i].attention = squares_above[i] / total_squares;
  }

  auto& q = stats.quantiles;
  q.p10 = quantile_of_sorted(sorted, 0.10);
  q.p25 = quantile_of_sorted(sorted, 0.25);
  q.p50 = quantile_of_sorted(sorted, 0.50);
  q.p75 = quantile_of_sorted(sorted, 0.75);
  q.p90 = quantile_of_sorted(sorted, 0.90);
  q.p95 = quantile_of_sorted(sorted, 0.95);
  q.p99 = quantile_of_sorted(sorted, 0.99);
  q.p999 = quantile_of_sorted(sorted, 0.999);
  return stats;
}

std::string format_length_stats(const LengthStats& stats) {
  char line[256];
  std::string text;
  std::snprintf(line, sizeof line, "%lld sequences, %lld tokens, mean %.1f, min %lld, max %lld\n",
                static_cast<long long>(stats.count), static_cast<long long>(stats.total_tokens), stats.mean,
                static_cast<long long>(stats.min), static_cast<long long>(stats.max));
  text += line;
  const auto& q = stats.quantiles;
  std::snprintf(line, sizeof line,
                "p10 %.0f  p25 %.0f  p50 %.0f  p75 %.0f  p90 %.0f  p95 %.0f  p99 %.0f  p99.9 %.0f\n", q.p10,
                q.p25, q.p50, q.p75, q.p90, q.p95, q.p99, q.p999);
  text += line;
  for (const auto& a : stats.above) {
    std::snprintf(line, sizeof line, "> %lld: %.2f%% of sequences, %.1f%% of tokens, %.1f%% of sum(s^2)\n",
                  static_cast<long long>(a.threshold), 100.0 * a.sequences, 100.0 * a.tokens,
                  100.0 * a.attention);
    text += line;
  }
  return text;
}

}  // namespace zb
