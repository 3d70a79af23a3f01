#pragma once
// Workload: turns the scenario's workload section into batches of document lengths, one per iteration.
// Deterministic: the same (seed, iteration) gives the same batch on every platform, and iteration i can be
// drawn without drawing iterations 0..i-1 (each iteration has its own random stream).
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/config/scenario.hpp"

namespace zb {

// One iteration's global batch: the document lengths in draw order. Their sum equals the scenario's
// tokens_per_iteration exactly (the last document drawn is shortened to fit the budget). The max_seq_len
// policy has been applied: with truncate and split every length is ≤ max_seq_len; split emits the pieces
// of a long document as consecutive entries.
struct Batch {
  int iteration = 0;
  std::vector<std::int64_t> lengths;

  [[nodiscard]] std::int64_t total_tokens() const;
};

// Draws raw document lengths (before max_seq_len and the budget are applied).
class LengthSampler {
 public:
  virtual ~LengthSampler() = default;
  virtual std::int64_t draw(class Rng& rng) const = 0;
  [[nodiscard]] virtual std::string describe() const = 0;
};

class Workload {
 public:
  // Builds the sampler for the scenario's source (dataset preset, distribution or lengths file).
  // Throws zb::Error (bad input) for an unreadable or malformed lengths file, naming the line.
  explicit Workload(const Scenario& scenario);

  [[nodiscard]] Batch batch(int iteration) const;
  [[nodiscard]] const LengthSampler& sampler() const { return *sampler_; }
  [[nodiscard]] const WorkloadSpec& spec() const { return spec_; }

  // One line on where the lengths come from, plus how they are cut (max_seq_len, policy, budget).
  [[nodiscard]] std::string describe() const;

 private:
  WorkloadSpec spec_;
  std::uint64_t seed_;
  std::shared_ptr<const LengthSampler> sampler_;
};

}  // namespace zb
