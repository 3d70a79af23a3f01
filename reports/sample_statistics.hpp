#pragma once
// Statistics over the per-iteration samples of a run: the aggregates every report shows, and the
// two-sided Mann–Whitney U test `compare` uses to tell a real change from noise (definitions:
// docs/METRICS.md, "Report figures").
#include <string>
#include <vector>

namespace zb::reports {

struct SampleAggregates {
  int count = 0;
  double mean = 0;
  double sd = 0;  // sample standard deviation (n − 1); 0 for fewer than two samples
  double min = 0;
  double max = 0;
  double median = 0;  // mean of the two middle values for an even count
};

[[nodiscard]] SampleAggregates aggregate(const std::vector<double>& samples);

enum class UTestMethod { exact, normal };

struct MannWhitneyResult {
  double u = 0;        // U of the first sample: pairs (x, y) with x > y, ties counting one half
  double p_value = 1;  // two-sided
  UTestMethod method = UTestMethod::exact;
  bool ties = false;
};

// Samples up to this size on each side, without ties, get the exact null distribution of U.
inline constexpr int exact_u_test_max_size = 20;

// Two-sided Mann–Whitney U test of `first` against `second`. Exact distribution when both sizes are
// ≤ exact_u_test_max_size and no value is shared; otherwise the normal approximation with tie correction
// and continuity correction (the same conventions as scipy.stats.mannwhitneyu, method "exact" and
// "asymptotic"). Either sample empty → p = 1.
[[nodiscard]] MannWhitneyResult mann_whitney_u(const std::vector<double>& first,
                                               const std::vector<double>& second);

// The smallest two-sided p the exact test can ever give for these sizes: 2 / C(n1 + n2, n1). When it is
// above alpha, no difference can be called significant, however large.
[[nodiscard]] double smallest_exact_p_value(int first_size, int second_size);

[[nodiscard]] const char* to_string(UTestMethod method);

}  // namespace zb::reports
