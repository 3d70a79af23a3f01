#include "core/workload/samplers.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <utility>

#include "core/common/error.hpp"
#include "core/workload/inverse_normal.hpp"

namespace zb {
namespace {

Location distribution_key(const char* key) {
  Location where;
  where.json_path = std::string("workload.distribution.") + key;
  return where;
}

// Short formatting for describe(): whole tokens for lengths, three significant digits for shapes
// (std::to_string prints six decimals everywhere, %g prints 9e+04 for a 90K median).
std::string number(double x) {
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, std::fabs(x) >= 100.0 ? "%.0f" : "%.3g", x);
  return buffer;
}

}  // namespace

double uniform_open01(Rng& rng) {
  return (static_cast<double>(rng.next_u64() >> 11) + 0.5) * 0x1.0p-53;
}

std::int64_t to_document_length(double x) {
  if (!(x >= 1.0)) return 1;  // also catches NaN
  if (x >= static_cast<double>(kMaxDocumentLength)) return kMaxDocumentLength;
  return std::llround(x);
}

// --- lognormal body + Pareto tail ---------------------------------------------------------------------

LognormalTailSampler::LognormalTailSampler(const DistributionSpec& spec)
    : median_(spec.median),
      sigma_(spec.sigma),
      has_tail_(spec.tail_alpha.has_value()),
      tail_alpha_(spec.tail_alpha.value_or(0.0)),
      tail_from_(spec.tail_from),
      tail_start_(std::numeric_limits<double>::infinity()) {
  ProblemList problems;
  if (!(median_ > 0.0) || !std::isfinite(median_))
    problems.add(distribution_key("median"), "median must be a positive number of tokens");
  if (!(sigma_ >= 0.0) || !std::isfinite(sigma_))
    problems.add(distribution_key("sigma"), "sigma must be ≥ 0");
  if (has_tail_) {
    if (!(tail_alpha_ > 0.0) || !std::isfinite(tail_alpha_)) {
      problems.add(distribution_key("tail_alpha"), "tail_alpha must be > 0",
                   "typical text tails have α between 1.2 and 2");
    }
    if (!(tail_from_ > 0.0 && tail_from_ < 1.0)) {
      problems.add(distribution_key("tail_from"), "tail_from must be a quantile strictly between 0 and 1",
                   "e.g. 0.95");
    }
  }
  problems.throw_if_any();
  if (has_tail_) tail_start_ = median_ * std::exp(sigma_ * inverse_normal_cdf(tail_from_));
}

double LognormalTailSampler::quantile(double u) const {
  if (!has_tail_ || u < tail_from_) return median_ * std::exp(sigma_ * inverse_normal_cdf(u));
  const double v = (u - tail_from_) / (1.0 - tail_from_);
  return tail_start_ * std::pow(1.0 - v, -1.0 / tail_alpha_);
}

std::int64_t LognormalTailSampler::draw(Rng& rng) const {
  return to_document_length(quantile(uniform_open01(rng)));
}

double LognormalTailSampler::mean() const {
  const double full_body = median_ * std::exp(0.5 * sigma_ * sigma_);
  if (!has_tail_) return full_body;
  if (tail_alpha_ <= 1.0) return std::numeric_limits<double>::infinity();
  // E[X; X < x_min] of the lognormal is m·e^{σ²/2}·Φ(z − σ) with z = Φ⁻¹(tail_from); the Pareto part
  // has mass 1 − tail_from and mean α·x_min/(α − 1).
  const double z = inverse_normal_cdf(tail_from_);
  const double body = full_body * normal_cdf(z - sigma_);
  return body + (1.0 - tail_from_) * tail_alpha_ * tail_start_ / (tail_alpha_ - 1.0);
}

std::string LognormalTailSampler::describe() const {
  std::string text = "lognormal(median " + number(median_) + ", sigma " + number(sigma_) + ")";
  if (has_tail_) {
    text += " + Pareto tail (alpha " + number(tail_alpha_) + ") from p" + number(100.0 * tail_from_) + " = " +
            number(tail_start_) + " tokens";
  }
  return text;
}

// --- uniform and fixed ---------------------------------------------------------------------------------

UniformSampler::UniformSampler(std::int64_t min, std::int64_t max) : min_(min), max_(max) {
  ProblemList problems;
  if (min < 1) problems.add(distribution_key("min"), "min must be ≥ 1 token");
  if (max < min)
    problems.add(distribution_key("max"), "max must be ≥ min", "set both min and max for kind \"uniform\"");
  problems.throw_if_any();
}

std::int64_t UniformSampler::draw(Rng& rng) const {
  const auto span = static_cast<std::uint64_t>(max_ - min_) + 1;
  return min_ + static_cast<std::int64_t>(rng.below(span));
}

std::string UniformSampler::describe() const {
  return "uniform[" + std::to_string(min_) + ", " + std::to_string(max_) + "]";
}

FixedSampler::FixedSampler(std::int64_t value) : value_(value) {
  if (value < 1)
    throw_input_error(distribution_key("value"), "value must be ≥ 1 token", "kind \"fixed\" needs \"value\"");
}

std::int64_t FixedSampler::draw(Rng& /*rng*/) const {
  return value_;
}

std::string FixedSampler::describe() const {
  return "fixed(" + std::to_string(value_) + ")";
}

// --- mixture -------------------------------------------------------------------------------------------

MixtureSampler::MixtureSampler(std::vector<Component> components) : components_(std::move(components)) {
  double total = 0;
  for (const auto& c : components_) {
    if (!c.sampler || !(c.weight >= 0.0) || !std::isfinite(c.weight)) {
      throw_input_error({}, "mixture component '" + c.label + "' needs a sampler and a finite weight ≥ 0");
    }
    total += c.weight;
  }
  if (!(total > 0.0)) throw_input_error({}, "a mixture needs at least one component with a positive weight");
  double running = 0;
  for (auto& c : components_) {
    c.weight /= total;
    running += c.weight;
    cumulative_.push_back(running);
  }
  cumulative_.back() = 1.0;  // rounding must not leave a gap that a uniform near 1 could fall into
}

std::int64_t MixtureSampler::draw(Rng& rng) const {
  const double u = rng.uniform();
  std::size_t i = 0;
  while (u >= cumulative_[i]) ++i;  // terminates: u < 1 = cumulative_.back()
  return components_[i].sampler->draw(rng);
}

std::string MixtureSampler::describe() const {
  std::string text = "mixture of";
  for (const auto& c : components_) {
    text += "\n  " + number(100.0 * c.weight) + "% of documents: " + c.label + ": " + c.sampler->describe();
  }
  return text;
}

// --- empirical -----------------------------------------------------------------------------------------

EmpiricalSampler::EmpiricalSampler(std::vector<std::int64_t> lengths, std::string origin)
    : lengths_(std::move(lengths)), origin_(std::move(origin)) {
  if (lengths_.empty()) {
    Location where;
    where.file = origin_;
    throw_input_error(where, "holds no document lengths");
  }
}

std::int64_t EmpiricalSampler::draw(Rng& rng) const {
  return lengths_[rng.below(lengths_.size())];
}

std::string EmpiricalSampler::describe() const {
  return "lengths of " + std::to_string(lengths_.size()) + " documents from " + origin_ + ", drawn uniformly";
}

// --- factories -----------------------------------------------------------------------------------------

std::shared_ptr<const LengthSampler> make_distribution_sampler(const DistributionSpec& spec) {
  if (spec.kind == "lognormal") return std::make_shared<LognormalTailSampler>(spec);
  if (spec.kind == "uniform") return std::make_shared<UniformSampler>(spec.min, spec.max);
  if (spec.kind == "fixed") return std::make_shared<FixedSampler>(spec.value);
  throw_input_error(distribution_key("kind"), "unknown distribution kind '" + spec.kind + "'",
                    "use one of: lognormal, uniform, fixed");
}

double analytic_mean(const DistributionSpec& spec) {
  if (spec.kind == "lognormal") return LognormalTailSampler(spec).mean();
  if (spec.kind == "uniform") return UniformSampler(spec.min, spec.max).mean();
  if (spec.kind == "fixed") {
    [[maybe_unused]] const FixedSampler validated(spec.value);
    return static_cast<double>(spec.value);
  }
  throw_input_error(distribution_key("kind"), "unknown distribution kind '" + spec.kind + "'");
}

}  // namespace zb
