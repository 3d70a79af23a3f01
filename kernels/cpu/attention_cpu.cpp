// CPU reference attention: the same blockwise online softmax as the CUDA kernel (key tiles, running max
// and sum, rescaling of the accumulator), so it is a true reference for it, in float32 (fast) and
// float64 (the oracle the tests compare everything against).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/attention.hpp"
#include "kernels/cpu/attention_cpu_common.hpp"

namespace zb::kernels {
namespace {

using cpu_detail::check_size;
using cpu_detail::visible_keys;

// Keys processed per online-softmax step; the CUDA kernel uses the same tile so both round alike.
constexpr std::int64_t kKeyTile = 64;

template <typename T>
Status attention_forward_impl(const AttentionShape& shape, std::span<const AttentionBlockDesc> blocks,
                              std::span<const T> q, std::span<const T> k, std::span<const T> v,
                              std::span<T> o, std::span<T> lse) {
  constexpr std::string_view entry = "attention_forward";
  if (Status s = validate_attention(entry, shape, blocks); !s) return s;
  const std::int64_t d = shape.head_dim;
  const std::int64_t heads = shape.heads;
  const std::int64_t kv_heads = shape.kv_heads;
  for (Status s : {check_size(entry, "q", q.size(), shape.q_tokens * heads * d),
                   check_size(entry, "k", k.size(), shape.kv_tokens * kv_heads * d),
                   check_size(entry, "v", v.size(), shape.kv_tokens * kv_heads * d),
                   check_size(entry, "o", o.size(), shape.out_rows * heads * d),
                   check_size(entry, "lse", lse.size(), shape.out_rows * heads)}) {
    if (!s) return s;
  }

  const std::int64_t group = heads / kv_heads;
  const T scale = T(1) / std::sqrt(static_cast<T>(d));
  const T minus_inf = -std::numeric_limits<T>::infinity();
  std::vector<T> acc(static_cast<std::size_t>(d));
  std::vector<T> scores(static_cast<std::size_t>(kKeyTile));

  for (const AttentionBlockDesc& b : blocks) {
    for (std::int64_t i = 0; i < b.q_count; ++i) {
      const std::int64_t keys = visible_keys(b, i);
      for (std::int64_t h = 0; h < heads; ++h) {
        const T* q_row = q.data() + ((b.q_row + i) * heads + h) * d;
        const std::int64_t kv_head = h / group;
        T running_max = minus_inf;
        T running_sum = 0;
        std::ranges::fill(acc, T(0));
        for (std::int64_t t0 = 0; t0 < keys; t0 += kKeyTile) {
          const std::int64_t t1 = std::min(t0 + kKeyTile, keys);
          T tile_max = minus_inf;
          for (std::int64_t j = t0; j < t1; ++j) {
            const T* k_row = k.data() + ((b.kv_row + j) * kv_heads + kv_head) * d;
            T dot = 0;
            for (std::int64_t c = 0; c < d; ++c) dot += q_row[c] * k_row[c];
            scores[static_cast<std::size_t>(j - t0)] = dot * scale;
            tile_max = std::max(tile_max, dot * scale);
          }
          const T new_max = std::max(running_max, tile_max);
          // exp(−inf − finite) = 0: the first tile simply starts the sums.
          const T correction = std::exp(running_max - new_max);
          running_sum *= correction;
          for (T& a : acc) a *= correction;
          for (std::int64_t j = t0; j < t1; ++j) {
            const T p = std::exp(scores[static_cast<std::size_t>(j - t0)] - new_max);
            running_sum += p;
            const T* v_row = v.data() + ((b.kv_row + j) * kv_heads + kv_head) * d;
            for (std::int64_t c = 0; c < d; ++c) acc[static_cast<std::size_t>(c)] += p * v_row[c];
          }
          running_max = new_max;
        }
        T* o_row = o.data() + ((b.out_row + i) * heads + h) * d;
        T& lse_out = lse[static_cast<std::size_t>((b.out_row + i) * heads + h)];
        if (keys == 0) {
          std::fill(o_row, o_row + d, T(0));
          lse_out = minus_inf;
        } else {
          for (std::int64_t c = 0; c < d; ++c) o_row[c] = acc[static_cast<std::size_t>(c)] / running_sum;
          lse_out = running_max + std::log(running_sum);
        }
      }
    }
  }
  return Status::success();
}

template <typename T>
Status merge_partials_impl(int heads, int head_dim, std::span<T> o_a, std::span<T> lse_a,
                           std::span<const T> o_b, std::span<const T> lse_b) {
  constexpr std::string_view entry = "merge_partials";
  if (heads <= 0 || head_dim <= 0)
    return Status::failure(std::string(entry) + ": heads = " + std::to_string(heads) +
                           " and head_dim = " + std::to_string(head_dim) + " must be > 0");
  if (lse_a.size() % static_cast<std::size_t>(heads) != 0)
    return Status::failure(std::string(entry) + ": lse_a has " + std::to_string(lse_a.size()) +
                           " elements, not a multiple of heads = " + std::to_string(heads));
  const std::int64_t rows = static_cast<std::int64_t>(lse_a.size()) / heads;
  for (Status s : {check_size(entry, "lse_b", lse_b.size(), rows * heads),
                   check_size(entry, "o_a", o_a.size(), rows * heads * head_dim),
                   check_size(entry, "o_b", o_b.size(), rows * heads * head_dim)}) {
    if (!s) return s;
  }
  const T minus_inf = -std::numeric_limits<T>::infinity();
  for (std::size_t r = 0; r < lse_a.size(); ++r) {
    const T la = lse_a[r];
    const T lb = lse_b[r];
    T* oa = o_a.data() + r * static_cast<std::size_t>(head_dim);
    const T* ob = o_b.data() + r * static_cast<std::size_t>(head_dim);
    if (lb == minus_inf) continue;  // b is empty: a is the result
    if (la == minus_inf) {          // a is empty: b is the result
      std::copy(ob, ob + head_dim, oa);
      lse_a[r] = lb;
      continue;
    }
    const T m = std::max(la, lb);
    const T wa = std::exp(la - m);
    const T wb = std::exp(lb - m);
    const T sum = wa + wb;
    for (int c = 0; c < head_dim; ++c) oa[c] = (wa * oa[c] + wb * ob[c]) / sum;
    lse_a[r] = m + std::log(sum);
  }
  return Status::success();
}

}  // namespace

Status attention_forward(const AttentionShape& shape, std::span<const AttentionBlockDesc> blocks,
                         std::span<const float> q, std::span<const float> k, std::span<const float> v,
                         std::span<float> o, std::span<float> lse) {
  return attention_forward_impl<float>(shape, blocks, q, k, v, o, lse);
}

Status attention_forward(const AttentionShape& shape, std::span<const AttentionBlockDesc> blocks,
                         std::span<const double> q, std::span<const double> k, std::span<const double> v,
                         std::span<double> o, std::span<double> lse) {
  return attention_forward_impl<double>(shape, blocks, q, k, v, o, lse);
}

Status merge_partials(int heads, int head_dim, std::span<float> o_a, std::span<float> lse_a,
                      std::span<const float> o_b, std::span<const float> lse_b) {
  return merge_partials_impl<float>(heads, head_dim, o_a, lse_a, o_b, lse_b);
}

Status merge_partials(int heads, int head_dim, std::span<double> o_a, std::span<double> lse_a,
                      std::span<const double> o_b, std::span<const double> lse_b) {
  return merge_partials_impl<double>(heads, head_dim, o_a, lse_a, o_b, lse_b);
}

}  // namespace zb::kernels
