#include "core/workload/multinomial.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "core/workload/inverse_normal.hpp"
#include "core/workload/samplers.hpp"

namespace zb {
namespace {

// Below this mean the exact inversion is cheap (its loop runs about mean + 1 times) and the normal
// approximation's skew would show; above it the approximation is within a fraction of a standard deviation.
constexpr double exact_below_mean = 30;

// Binomial(n, p) for p ≤ 1/2 by inversion: walk the probability mass function from 0 until the uniform is
// covered. P(0) = (1 − p)^n ≥ e^(−1.39·30) here, far from underflow.
std::int64_t binomial_by_inversion(Rng& rng, std::int64_t n, double p) {
  const double u = rng.uniform();
  const double odds = p / (1 - p);
  double mass = std::exp(static_cast<double>(n) * std::log1p(-p));
  double cumulative = mass;
  std::int64_t x = 0;
  while (u > cumulative && x < n) {
    mass *= odds * static_cast<double>(n - x) / static_cast<double>(x + 1);
    cumulative += mass;
    ++x;
  }
  return x;
}

std::int64_t binomial_by_normal(Rng& rng, std::int64_t n, double p) {
  const double mean = static_cast<double>(n) * p;
  const double sd = std::sqrt(mean * (1 - p));
  const double x = std::round(mean + sd * inverse_normal_cdf(uniform_open01(rng)));
  return static_cast<std::int64_t>(std::clamp(x, 0.0, static_cast<double>(n)));
}

}  // namespace

std::int64_t binomial(Rng& rng, std::int64_t n, double p) {
  if (n <= 0 || !(p > 0)) return 0;
  if (p >= 1) return n;
  if (p > 0.5) return n - binomial(rng, n, 1 - p);  // the smaller tail keeps inversion short
  if (static_cast<double>(n) * p < exact_below_mean) return binomial_by_inversion(rng, n, p);
  return binomial_by_normal(rng, n, p);
}

std::vector<std::int64_t> capped_multinomial(Rng& rng, std::int64_t n, std::span<const double> weights,
                                             std::int64_t cap) {
  std::vector<std::int64_t> counts(weights.size(), 0);
  capped_multinomial_into(rng, n, weights, cap, counts);
  return counts;
}

void capped_multinomial_into(Rng& rng, std::int64_t n, std::span<const double> weights, std::int64_t cap,
                             std::span<std::int64_t> counts) {
  const auto outcomes = static_cast<std::int64_t>(weights.size());
  if (n < 0 || cap < 0 || n > cap * outcomes)
    throw std::invalid_argument("capped_multinomial: n must be in [0, cap × outcomes]");
  if (counts.size() != weights.size())
    throw std::invalid_argument("capped_multinomial: one count per weight");
  std::fill(counts.begin(), counts.end(), std::int64_t{0});
  if (n == 0) return;
  // The last outcome with weight takes what is left, so rounding in the running sum never loses an item
  // nor hands one to an outcome of weight 0.
  std::size_t last_weighted = 0;
  double remaining_weight = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (!(weights[i] > 0)) continue;
    last_weighted = i;
    remaining_weight += weights[i];
  }
  if (!(remaining_weight > 0)) throw std::invalid_argument("capped_multinomial: the weights sum to 0");
  std::int64_t remaining = n;
  for (std::size_t i = 0; i <= last_weighted && remaining > 0; ++i) {
    if (!(weights[i] > 0)) continue;
    counts[i] = i == last_weighted ? remaining : binomial(rng, remaining, weights[i] / remaining_weight);
    remaining -= counts[i];
    remaining_weight -= weights[i];
  }

  // The excess over the cap moves to the most probable outcomes that still have room.
  std::int64_t excess = 0;
  for (std::int64_t& count : counts) {
    excess += std::max<std::int64_t>(count - cap, 0);
    count = std::min(count, cap);
  }
  if (excess == 0) return;
  std::vector<std::size_t> by_weight(weights.size());
  std::iota(by_weight.begin(), by_weight.end(), std::size_t{0});
  std::stable_sort(by_weight.begin(), by_weight.end(),
                   [&](std::size_t a, std::size_t b) { return weights[a] > weights[b]; });
  for (std::size_t i : by_weight) {
    const std::int64_t moved = std::min(excess, cap - counts[i]);
    counts[i] += moved;
    excess -= moved;
    if (excess == 0) break;
  }
}

}  // namespace zb
