#pragma once
// Statistics of a set of sequence lengths: what a report needs to characterise a workload. Long
// sequences are rare but carry much of the tokens and most of the quadratic attention work, so besides
// quantiles we report, for each threshold, the share of sequences, of tokens and of Σs² above it.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace zb {

// The default thresholds: 4K (where packing into short windows stops working) and 32K.
inline constexpr std::int64_t kDefaultLengthThresholds[] = {4096, 32768};

struct ThresholdShares {
  std::int64_t threshold = 0;
  double sequences = 0;  // share of sequences longer than the threshold (strictly greater), in [0, 1]
  double tokens = 0;     // share of tokens in those sequences
  double attention = 0;  // share of Σ s² (causal attention work is proportional to s²) in those sequences
};

struct LengthQuantiles {
  double p10 = 0, p25 = 0, p50 = 0, p75 = 0, p90 = 0, p95 = 0, p99 = 0, p999 = 0;
};

struct LengthStats {
  std::int64_t count = 0;
  std::int64_t total_tokens = 0;
  double mean = 0;
  std::int64_t min = 0;
  std::int64_t max = 0;
  LengthQuantiles quantiles;
  std::vector<ThresholdShares> above;  // one per threshold, in the order given
};

// The p-quantile (0 ≤ p ≤ 1) of sorted values by linear interpolation between closest ranks (Hyndman &
// Fan type 7, the default of NumPy and R): h = (n − 1)·p, x[⌊h⌋] + (h − ⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋]).
// Precondition: `sorted` is non-empty and ascending.
[[nodiscard]] double quantile_of_sorted(std::span<const std::int64_t> sorted, double p);

// All statistics of `lengths` (any order). An empty input gives count 0 and zeros everywhere.
[[nodiscard]] LengthStats compute_length_stats(
    std::span<const std::int64_t> lengths,
    std::span<const std::int64_t> thresholds = std::span<const std::int64_t>(kDefaultLengthThresholds));

// A few lines for the console: count, mean, quantiles, and the shares above each threshold.
[[nodiscard]] std::string format_length_stats(const LengthStats& stats);

}  // namespace zb
