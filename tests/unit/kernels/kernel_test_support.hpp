#pragma once
// Shared helpers of the kernel tests: random tensors from zb::Rng and a naive float64 attention that is
// written independently of the kernels (full softmax per row, mask tested key by key), so the tests
// compare two different formulations rather than a kernel with itself.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "core/common/rng.hpp"
#include "kernels/attention.hpp"

namespace zb::kernels::testing {

inline std::vector<double> random_normal(Rng& rng, std::int64_t count) {
  std::vector<double> values(static_cast<std::size_t>(count));
  for (double& x : values) x = rng.normal();
  return values;
}

inline std::vector<float> to_float(std::span<const double> values) {
  std::vector<float> out(values.size());
  std::ranges::transform(values, out.begin(), [](double x) { return static_cast<float>(x); });
  return out;
}

// Q, K, V for a shape, drawn from `rng`.
struct AttentionInputs {
  std::vector<double> q, k, v;
};

inline AttentionInputs random_inputs(Rng& rng, const AttentionShape& shape) {
  AttentionInputs in;
  in.q = random_normal(rng, shape.q_tokens * shape.heads * shape.head_dim);
  in.k = random_normal(rng, shape.kv_tokens * shape.kv_heads * shape.head_dim);
  in.v = random_normal(rng, shape.kv_tokens * shape.kv_heads * shape.head_dim);
  return in;
}

// O and LSE of every output row of `shape`, filled with NaN so that rows no block writes stand out.
struct AttentionOutputs {
  std::vector<double> o, lse;
};

inline AttentionOutputs nan_outputs(const AttentionShape& shape) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  return {std::vector<double>(static_cast<std::size_t>(shape.out_rows * shape.heads * shape.head_dim), nan),
          std::vector<double>(static_cast<std::size_t>(shape.out_rows * shape.heads), nan)};
}

// One sequence cut into query blocks at `cuts` (its first and last positions included), each block
// reading every key up to its own end, with absolute positions and outputs at the query rows: together
// they are the causal attention over the whole sequence.
inline std::vector<AttentionBlockDesc> causal_query_blocks(std::span<const std::int64_t> cuts) {
  std::vector<AttentionBlockDesc> blocks;
  for (std::size_t c = 0; c + 1 < cuts.size(); ++c) {
    const std::int64_t begin = cuts[c], end = cuts[c + 1];
    blocks.push_back({begin, end - begin, 0, end, begin, 0, AttentionMask::causal, begin});
  }
  return blocks;
}

// Three one-token blocks over 3 rows: a query at position 7 with its own key (sees it), one with the key
// after it (sees nothing), and a full-mask pair.
inline std::vector<AttentionBlockDesc> one_token_blocks() {
  return {{0, 1, 0, 1, 7, 7, AttentionMask::causal, 0},
          {1, 1, 1, 1, 7, 8, AttentionMask::causal, 1},
          {2, 1, 2, 1, 0, 5, AttentionMask::full, 2}};
}

// softmax(Q Kᵀ / sqrt(d)) V per block, row by row, in float64, written into `out`.
inline void naive_attention(const AttentionShape& shape, std::span<const AttentionBlockDesc> blocks,
                            const AttentionInputs& in, AttentionOutputs& out) {
  const std::int64_t d = shape.head_dim;
  const std::int64_t group = shape.heads / shape.kv_heads;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  for (const AttentionBlockDesc& b : blocks) {
    for (std::int64_t i = 0; i < b.q_count; ++i) {
      for (std::int64_t h = 0; h < shape.heads; ++h) {
        const double* q = in.q.data() + ((b.q_row + i) * shape.heads + h) * d;
        std::vector<double> scores;
        std::vector<std::int64_t> keys;
        for (std::int64_t j = 0; j < b.kv_count; ++j) {
          const bool visible = b.mask == AttentionMask::full || b.kv_position + j <= b.q_position + i;
          if (!visible) continue;
          const double* k = in.k.data() + ((b.kv_row + j) * shape.kv_heads + h / group) * d;
          double dot = 0;
          for (std::int64_t c = 0; c < d; ++c) dot += q[c] * k[c];
          scores.push_back(dot * scale);
          keys.push_back(j);
        }
        double* o = out.o.data() + ((b.out_row + i) * shape.heads + h) * d;
        double& lse = out.lse[static_cast<std::size_t>((b.out_row + i) * shape.heads + h)];
        std::fill(o, o + d, 0.0);
        if (scores.empty()) {
          lse = -std::numeric_limits<double>::infinity();
          continue;
        }
        const double max = *std::ranges::max_element(scores);
        double sum = 0;
        for (double s : scores) sum += std::exp(s - max);
        for (std::size_t n = 0; n < keys.size(); ++n) {
          const double p = std::exp(scores[n] - max) / sum;
          const double* v = in.v.data() + ((b.kv_row + keys[n]) * shape.kv_heads + h / group) * d;
          for (std::int64_t c = 0; c < d; ++c) o[c] += p * v[c];
        }
        lse = max + std::log(sum);
      }
    }
  }
}

// ‖a − b‖ / ‖b‖. A NaN in the reference marks a row no block writes: `a` must have left it NaN too.
// Any other NaN in `a` makes the error infinite, so a row the kernel failed to write fails the test.
template <typename A>
double relative_error(std::span<const A> a, std::span<const double> b) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    const double x = static_cast<double>(a[i]);
    if (std::isnan(b[i]) != std::isnan(x)) return std::numeric_limits<double>::infinity();
    if (std::isnan(x)) continue;
    diff += (x - b[i]) * (x - b[i]);
    norm += b[i] * b[i];
  }
  return norm == 0 ? std::sqrt(diff) : std::sqrt(diff / norm);
}

// Largest |a − b| where both are finite; matching infinities (empty rows) and matching NaNs (rows no
// block writes) count as equal, any other mismatch is infinite.
template <typename A>
double max_abs_lse_error(std::span<const A> a, std::span<const double> b) {
  double worst = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    const double x = static_cast<double>(a[i]);
    if (std::isnan(b[i]) != std::isnan(x)) return std::numeric_limits<double>::infinity();
    if (std::isnan(x)) continue;
    if (std::isinf(b[i]) || std::isinf(x)) {
      if (x != b[i]) return std::numeric_limits<double>::infinity();
      continue;
    }
    if (std::isnan(x)) return std::numeric_limits<double>::infinity();
    worst = std::max(worst, std::abs(x - b[i]));
  }
  return worst;
}

}  // namespace zb::kernels::testing
