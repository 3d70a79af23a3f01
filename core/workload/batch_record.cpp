#include "core/workload/batch_record.hpp"

#include <algorithm>
#include <cmath>

namespace zb {

std::uint64_t lengths_fnv1a(std::span<const std::int64_t> lengths) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (const std::int64_t length : lengths) {
    auto bits = static_cast<std::uint64_t>(length);
    for (int byte = 0; byte < 8; ++byte) {
      hash ^= bits & 0xffU;
      hash *= 0x100000001b3ULL;
      bits >>= 8;
    }
  }
  return hash;
}

BatchSummary summarize_batch(const Batch& batch) {
  BatchSummary s;
  s.iteration = batch.iteration;
  s.documents = static_cast<std::int64_t>(batch.lengths.size());
  for (const std::int64_t length : batch.lengths) {
    s.tokens += length;
    s.longest = std::max(s.longest, length);
  }
  s.lengths_fnv1a = lengths_fnv1a(batch.lengths);
  return s;
}

int LengthHistogram::bin_of(std::int64_t length) {
  const int bin = static_cast<int>(std::floor(2 * std::log2(static_cast<double>(length))));
  return std::clamp(bin, 0, kBins - 1);
}

void LengthHistogram::add(std::int64_t length) {
  if (length <= 0) return;
  const auto bin = static_cast<std::size_t>(bin_of(length));
  documents_[bin] += 1;
  tokens_[bin] += static_cast<double>(length);
  tokens_total_ += static_cast<double>(length);
  shortest_ = documents_total_ == 0 ? length : std::min(shortest_, length);
  longest_ = std::max(longest_, length);
  ++documents_total_;
}

void BatchRecord::add(const Batch& batch) {
  batches.push_back(summarize_batch(batch));
  for (const std::int64_t length : batch.lengths) lengths.add(length);
}

}  // namespace zb
