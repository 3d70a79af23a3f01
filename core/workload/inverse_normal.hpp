#pragma once
// The standard normal quantile function Φ⁻¹ and distribution function Φ, written out so that length
// samplers can use the inverse-CDF method: one uniform u gives one length, and the lognormal body and the
// Pareto tail meet exactly at the splice quantile (Box–Muller could not say which quantile a draw is).

namespace zb {

// Φ⁻¹(p) for 0 < p < 1, by Wichura's algorithm AS241 (PPND16, Applied Statistics 37(3), 1988): relative
// error about 1e-16, built from rational functions, sqrt and log only. Returns -inf for p ≤ 0 and +inf
// for p ≥ 1.
[[nodiscard]] double inverse_normal_cdf(double p);

// Φ(z), through std::erfc. Used for analytic means and mixture weights, never inside a draw.
[[nodiscard]] double normal_cdf(double z);

}  // namespace zb
