#pragma once
// The paired test `compare` uses when both reports are simulations of the same batches (same scenario,
// seed and workload): iteration i of the base and of the candidate saw the same documents, so the ratio
// candidate_i / base_i isolates the change of the code from the change of the workload between
// iterations. A rank test over 3 pairs can never reach p < 0.05 (its smallest p is 2 / 2³ = 0.25); a t test
// on the log ratios can, because it uses how consistent the ratios are, not only their signs.
// Definitions: docs/METRICS.md ("compare: paired t test").
#include <optional>
#include <vector>

namespace zb::reports {

struct PairedTestResult {
  int pairs = 0;
  double mean_log_ratio = 0;  // mean of ln(candidate_i / base_i)
  double sd_log_ratio = 0;    // sample standard deviation of the log ratios (n − 1)
  double t = 0;               // mean / (sd / √n); ±infinity when sd = 0 and the mean is not
  double p_value = 1;         // two-sided, Student t with n − 1 degrees of freedom
};

// Pairs `base[i]` with `candidate[i]`; both must have the same size and only positive values (figures
// here are times, rates and fractions of peak). Fewer than 2 pairs → p = 1. Every ratio equal: p = 1
// when they are all 1 (no change at all), p = 0 otherwise (the same change on every batch is certain).
[[nodiscard]] PairedTestResult paired_log_ratio_t_test(const std::vector<double>& base,
                                                       const std::vector<double>& candidate);

// The interval the same test gives for a ratio: over pairs (denominator_i, numerator_i), the ratios
// numerator_i / denominator_i have the geometric mean exp(m), m = mean of their logs, and the (1 − alpha)
// interval [exp(m − q·sd/√n), exp(m + q·sd/√n)], q = student_t_critical_value(alpha, n − 1), sd the
// sample sd of the logs. `p_value` is the paired t test's (two-sided, no change = ratio 1), so the
// interval excludes 1 exactly when p < alpha; `significant` is p < alpha. Definitions: docs/METRICS.md
// ("Combined table", speed-up interval).
struct RatioInterval {
  int pairs = 0;
  double geometric_mean = 1;
  double low = 1;
  double high = 1;
  double p_value = 1;
  bool significant = false;
};

// None with fewer than 2 pairs (n − 1 = 0 degrees of freedom: no spread to estimate, and no interval is
// invented). Both vectors hold positive values; extra values of the longer one are ignored.
[[nodiscard]] std::optional<RatioInterval> paired_ratio_interval(const std::vector<double>& denominator,
                                                                 const std::vector<double>& numerator,
                                                                 double alpha = 0.05);

// The two-sided critical value of Student's t: the q > 0 with P(|T| ≥ q) = alpha (12.706 for ν = 1,
// 2.262 for ν = 9 at alpha 0.05), found by bisection on student_t_two_sided_p.
[[nodiscard]] double student_t_critical_value(double alpha, double degrees_of_freedom);

// P(|T| ≥ |t|) for Student's t with `degrees_of_freedom` > 0: I_{ν/(ν+t²)}(ν/2, 1/2), the regularised
// incomplete beta function.
[[nodiscard]] double student_t_two_sided_p(double t, double degrees_of_freedom);

// The regularised incomplete beta function I_x(a, b) for a, b > 0 and 0 ≤ x ≤ 1.
[[nodiscard]] double regularized_incomplete_beta(double x, double a, double b);

}  // namespace zb::reports
