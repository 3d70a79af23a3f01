#pragma once
// Length samplers: parametric distributions (lognormal body with an optional Pareto tail, uniform,
// fixed), mixtures of them, and the empirical distribution of a lengths file. Every sampler is a pure
// function of the random stream it is given, so batches are reproducible from (seed, iteration).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/common/rng.hpp"
#include "core/config/document_limit.hpp"
#include "core/config/scenario.hpp"
#include "core/workload/workload.hpp"

namespace zb {

// A uniform in the open interval (0, 1): the midpoint of one of 2^53 equal cells, so neither 0 nor 1 can
// come out and the inverse CDFs below never see an infinite quantile.
[[nodiscard]] double uniform_open01(Rng& rng);

// Rounds a continuous length to a document length in [1, kMaxDocumentLength]
// (core/config/document_limit.hpp): a Pareto draw with u → 1 reaches any length, and the cap keeps it, and
// every count derived from it, inside std::int64_t.
[[nodiscard]] std::int64_t to_document_length(double x);

// Lognormal body (median m = e^μ, log-sd σ) with an optional Pareto tail spliced at quantile tail_from:
//   Q(u) = m·exp(σ·Φ⁻¹(u))                         for u < tail_from (or always, without a tail)
//   Q(u) = x_min·(1 − v)^(−1/α), v = (u − tail_from)/(1 − tail_from), x_min = m·exp(σ·Φ⁻¹(tail_from))
// Q is continuous at the splice, so the tail starts exactly where the body's tail_from quantile is.
class LognormalTailSampler final : public LengthSampler {
 public:
  // Throws zb::Error (bad input) when median ≤ 0, σ < 0, tail_alpha ≤ 0 or tail_from ∉ (0, 1).
  explicit LognormalTailSampler(const DistributionSpec& spec);

  std::int64_t draw(Rng& rng) const override;
  [[nodiscard]] std::string describe() const override;

  [[nodiscard]] double quantile(double u) const;  // continuous quantile function Q(u), 0 < u < 1
  [[nodiscard]] double tail_start() const { return tail_start_; }  // x_min (infinity without a tail)
  [[nodiscard]] double mean() const;                               // analytic; infinity when α ≤ 1

 private:
  double median_;
  double sigma_;
  bool has_tail_;
  double tail_alpha_;
  double tail_from_;
  double tail_start_;
};

// Uniform integer length in [min, max].
class UniformSampler final : public LengthSampler {
 public:
  UniformSampler(std::int64_t min, std::int64_t max);  // throws bad input unless 1 ≤ min ≤ max
  std::int64_t draw(Rng& rng) const override;
  [[nodiscard]] std::string describe() const override;
  [[nodiscard]] double mean() const { return 0.5 * (static_cast<double>(min_) + static_cast<double>(max_)); }

 private:
  std::int64_t min_;
  std::int64_t max_;
};

// Every document has the same length.
class FixedSampler final : public LengthSampler {
 public:
  explicit FixedSampler(std::int64_t value);  // throws bad input unless value ≥ 1
  std::int64_t draw(Rng& rng) const override;
  [[nodiscard]] std::string describe() const override;

 private:
  std::int64_t value_;
};

// Picks a component with probability proportional to its weight (one uniform), then draws from it.
class MixtureSampler final : public LengthSampler {
 public:
  struct Component {
    std::string label;
    std::shared_ptr<const LengthSampler> sampler;
    double weight = 0;  // share of documents; normalised by the constructor
  };
  explicit MixtureSampler(std::vector<Component> components);  // throws bad input on bad weights

  std::int64_t draw(Rng& rng) const override;
  [[nodiscard]] std::string describe() const override;
  [[nodiscard]] const std::vector<Component>& components() const { return components_; }

 private:
  std::vector<Component> components_;
  std::vector<double> cumulative_;  // cumulative normalised weights; the last is exactly 1
};

// Draws uniformly from a list of lengths (the empirical distribution of a lengths file).
class EmpiricalSampler final : public LengthSampler {
 public:
  EmpiricalSampler(std::vector<std::int64_t> lengths, std::string origin);  // throws when empty
  std::int64_t draw(Rng& rng) const override;
  [[nodiscard]] std::string describe() const override;
  [[nodiscard]] const std::vector<std::int64_t>& lengths() const { return lengths_; }

 private:
  std::vector<std::int64_t> lengths_;
  std::string origin_;
};

// Builds the sampler of a "distribution" section (kind lognormal | uniform | fixed).
[[nodiscard]] std::shared_ptr<const LengthSampler> make_distribution_sampler(const DistributionSpec& spec);

// Analytic mean length of a distribution (before rounding and the length cap); infinity when the Pareto
// tail has α ≤ 1. Mixtures given as token shares use it to turn shares of tokens into shares of documents.
[[nodiscard]] double analytic_mean(const DistributionSpec& spec);

}  // namespace zb
