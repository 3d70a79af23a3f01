#include "core/qualify/gpu_sweeps.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "core/common/error.hpp"

namespace zb::qualify {
namespace {

void require(bool ok, const std::string& field, const std::string& what) {
  if (!ok) throw Error(ExitCode::bad_input, Location{}, "GPU qualify sweep: " + field + " " + what);
}

bool positive_and_increasing(const std::vector<std::int64_t>& values) {
  if (values.empty() || values.front() <= 0) return false;
  return std::adjacent_find(values.begin(), values.end(), [](auto a, auto b) { return b <= a; }) ==
         values.end();
}

template <typename Bytes>
std::vector<std::int64_t> fitting(const std::vector<std::int64_t>& sizes, double budget, Bytes bytes) {
  std::vector<std::int64_t> out;
  for (const std::int64_t size : sizes)
    if (static_cast<double>(bytes(size)) <= budget) out.push_back(size);
  return out;
}

}  // namespace

double gemm_flops(std::int64_t m, std::int64_t n, std::int64_t k) {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
}

double causal_attention_flops(std::int64_t tokens, int heads, int head_dim) {
  const double pairs = static_cast<double>(tokens) * static_cast<double>(tokens + 1) / 2.0;
  return 4.0 * head_dim * heads * pairs;
}

std::int64_t gemm_probe_bytes(std::int64_t size) {
  return 3 * size * size * 2;
}  // A, B, C in bf16

std::int64_t attention_probe_bytes(std::int64_t tokens, int heads, int head_dim) {
  const std::int64_t tensor = tokens * heads * head_dim * 2;  // bf16
  return 4 * tensor + tokens * heads * 4;                     // Q, K, V, O + fp32 LSE
}

std::vector<std::int64_t> gemm_sizes_that_fit(const GpuComputeSweep& sweep, double memory_bytes,
                                              double fraction) {
  return fitting(sweep.gemm_sizes, fraction * memory_bytes, gemm_probe_bytes);
}

std::vector<std::int64_t> attention_lengths_that_fit(const GpuComputeSweep& sweep, double memory_bytes,
                                                     double fraction) {
  return fitting(sweep.attention_tokens, fraction * memory_bytes, [&](std::int64_t tokens) {
    return attention_probe_bytes(tokens, sweep.heads, sweep.head_dim);
  });
}

void validate(const GpuComputeSweep& s) {
  require(positive_and_increasing(s.gemm_sizes), "gemm_sizes", "must be positive and increasing");
  require(positive_and_increasing(s.attention_tokens), "attention_tokens", "must be positive and increasing");
  require(s.heads > 0, "heads", "must be positive");
  require(
      s.head_dim > 0 && s.head_dim % 8 == 0 && s.head_dim <= 256, "head_dim",
      "must be a multiple of 8 and at most 256 (what cuDNN's SDPA takes), got " + std::to_string(s.head_dim));
  require(s.warmup >= 0, "warmup", "must not be negative");
  require(s.repetitions >= 1, "repetitions", "must be at least 1");
}

void validate(const GpuLinkSweep& s) {
  require(s.bytes > 0, "bytes", "must be positive");
  require(s.routed_chunk > 0 && s.routed_chunk <= s.bytes, "routed_chunk",
          "must be positive and at most bytes");
  require(s.warmup >= 0, "warmup", "must not be negative");
  require(s.repetitions >= 1, "repetitions", "must be at least 1");
  require(s.round_trips >= 1, "round_trips", "must be at least 1");
}

std::string gemm_shape_label(std::int64_t size) {
  return fmt::format("m=n=k={}", size);
}

std::string attention_shape_label(std::int64_t tokens, int heads, int head_dim) {
  return fmt::format("causal {} tokens, {}×{}", tokens, heads, head_dim);
}

std::string transfer_shape_label(std::int64_t bytes) {
  if (bytes >= (std::int64_t{1} << 20) && bytes % (std::int64_t{1} << 20) == 0)
    return fmt::format("{} MiB", bytes >> 20);
  if (bytes >= 1024 && bytes % 1024 == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} B", bytes);
}

double median_time(std::vector<double> times) {
  if (times.empty()) return 0;
  std::sort(times.begin(), times.end());
  return times[(times.size() - 1) / 2];
}

}  // namespace zb::qualify
