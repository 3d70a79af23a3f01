#pragma once
// What a run keeps of the batches it drew. `run` draws each iteration's batch when that iteration runs and
// drops it afterwards (a batch depends only on the seed and the iteration), so a run's memory grows with its
// iterations, never with iterations × documents. The reports need only this much of the batches: per
// iteration its size and a fingerprint (report.json's workload.batches, which `compare` reads to pair
// iterations), and for the whole run a histogram of document lengths (report.html).
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "core/workload/workload.hpp"

namespace zb {

// FNV-1a, 64 bits, over each length as 8 little-endian bytes: the same on every platform, so equal
// fingerprints of two runs' iteration i mean (short of a collision) equal batches.
[[nodiscard]] std::uint64_t lengths_fnv1a(std::span<const std::int64_t> lengths);

struct BatchSummary {
  int iteration = 0;
  std::int64_t documents = 0;
  std::int64_t tokens = 0;
  std::int64_t longest = 0;  // 0 for an empty batch
  std::uint64_t lengths_fnv1a = 0;
};

[[nodiscard]] BatchSummary summarize_batch(const Batch& batch);

// Document lengths in half-octave bins of a log₂ axis: bin b = ⌊2·log₂ length⌋ holds lengths in
// [2^(b/2), 2^((b+1)/2)). 128 bins cover every positive 64-bit length, so the histogram has a fixed size
// however many documents it counts. Counts and tokens are doubles summed in the order the lengths were
// added, which is what the chart prints.
class LengthHistogram {
 public:
  static constexpr int kBins = 128;

  void add(std::int64_t length);  // non-positive lengths are not counted (a batch has none)
  [[nodiscard]] static int bin_of(std::int64_t length);

  [[nodiscard]] std::int64_t documents() const { return documents_total_; }
  [[nodiscard]] double tokens() const { return tokens_total_; }
  [[nodiscard]] std::int64_t shortest() const { return shortest_; }  // 0 when no document was counted
  [[nodiscard]] std::int64_t longest() const { return longest_; }
  [[nodiscard]] double documents_in(int bin) const { return documents_[static_cast<std::size_t>(bin)]; }
  [[nodiscard]] double tokens_in(int bin) const { return tokens_[static_cast<std::size_t>(bin)]; }

 private:
  std::array<double, kBins> documents_{};
  std::array<double, kBins> tokens_{};
  std::int64_t documents_total_ = 0;
  double tokens_total_ = 0;
  std::int64_t shortest_ = 0;
  std::int64_t longest_ = 0;
};

// Every batch of a run, as the reports see it. Add the batches in iteration order.
struct BatchRecord {
  std::vector<BatchSummary> batches;  // one per iteration, in order
  LengthHistogram lengths;            // every document of every batch

  void add(const Batch& batch);
};

}  // namespace zb
