// CPU reference attention backward: the FlashAttention-2 recurrence (kernels/attention_backward.hpp).
// The probabilities are recomputed from the saved LSE instead of stored, so memory stays O(rows) like
// the forward's, and D = rowsum(dO ∘ O) replaces the softmax Jacobian's Σ_k P_k dP_k, so each block
// needs only its own keys. Arithmetic and accumulation are in the element type.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/attention_backward.hpp"
#include "kernels/cpu/attention_cpu_common.hpp"

namespace zb::kernels {
namespace {

using cpu_detail::check_size;
using cpu_detail::visible_keys;

// A row that sees keys needs the LSE of a softmax that includes them: −inf there (a row the forward
// found empty) or a NaN would turn every P into inf or NaN. Checked for every block before anything
// is accumulated, so a failed call leaves dQ, dK and dV untouched.
template <typename T>
Status check_lse(std::string_view entry, const AttentionShape& shape,
                 std::span<const AttentionBlockDesc> blocks, std::span<const T> lse) {
  for (std::size_t n = 0; n < blocks.size(); ++n) {
    const AttentionBlockDesc& b = blocks[n];
    for (std::int64_t i = 0; i < b.q_count; ++i) {
      const std::int64_t keys = visible_keys(b, i);
      if (keys == 0) continue;
      for (std::int64_t h = 0; h < shape.heads; ++h) {
        const T value = lse[static_cast<std::size_t>((b.out_row + i) * shape.heads + h)];
        if (std::isfinite(value)) continue;
        return Status::failure(std::string(entry) + ": blocks[" + std::to_string(n) + "] query " +
                               std::to_string(i) + " (out row " + std::to_string(b.out_row + i) + ", head " +
                               std::to_string(h) + ") sees " + std::to_string(keys) +
                               " keys but its LSE is " + std::to_string(value) +
                               "; pass the forward LSE merged over every key block of the row");
      }
    }
  }
  return Status::success();
}

// The inner loops run over head_dim in groups of kLanes independent lanes with a fixed trip count, which
// the compiler turns into vector instructions at -O2 (a single running sum would serialise every add).
// Lanes are combined in a fixed order, so results stay deterministic; the summation order is not the
// forward's, which the error bound does not depend on (docs/REFERENCE.md).
constexpr std::int64_t kLanes = 8;

template <typename T>
T dot(const T* a, const T* b, std::int64_t n) {
  T lane[kLanes] = {};
  std::int64_t c = 0;
  for (; c + kLanes <= n; c += kLanes)
    for (std::int64_t l = 0; l < kLanes; ++l) lane[l] += a[c + l] * b[c + l];
  T sum = 0;
  for (const T x : lane) sum += x;
  for (; c < n; ++c) sum += a[c] * b[c];
  return sum;
}

// y += alpha · x; y never aliases x (different tensors, or dQ's local accumulator).
template <typename T>
void axpy(T* __restrict y, T alpha, const T* __restrict x, std::int64_t n) {
  std::int64_t c = 0;
  for (; c + kLanes <= n; c += kLanes)
    for (std::int64_t l = 0; l < kLanes; ++l) y[c + l] += alpha * x[c + l];
  for (; c < n; ++c) y[c] += alpha * x[c];
}

template <typename T>
Status attention_backward_impl(const AttentionShape& shape, std::span<const AttentionBlockDesc> blocks,
                               std::span<const T> q, std::span<const T> k, std::span<const T> v,
                               std::span<const T> o, std::span<const T> d_o, std::span<const T> lse,
                               std::span<T> dq, std::span<T> dk, std::span<T> dv) {
  constexpr std::string_view entry = "attention_backward";
  if (Status s = validate_attention_backward(entry, shape, blocks); !s) return s;
  const std::int64_t d = shape.head_dim;
  const std::int64_t heads = shape.heads;
  const std::int64_t kv_heads = shape.kv_heads;
  const std::int64_t q_size = shape.q_tokens * heads * d;
  const std::int64_t kv_size = shape.kv_tokens * kv_heads * d;
  const std::int64_t out_size = shape.out_rows * heads * d;
  for (Status s : {check_size(entry, "q", q.size(), q_size), check_size(entry, "k", k.size(), kv_size),
                   check_size(entry, "v", v.size(), kv_size), check_size(entry, "o", o.size(), out_size),
                   check_size(entry, "d_o", d_o.size(), out_size),
                   check_size(entry, "lse", lse.size(), shape.out_rows * heads),
                   check_size(entry, "dq", dq.size(), q_size), check_size(entry, "dk", dk.size(), kv_size),
                   check_size(entry, "dv", dv.size(), kv_size)}) {
    if (!s) return s;
  }
  if (Status s = check_lse<T>(entry, shape, blocks, lse); !s) return s;

  const std::int64_t group = heads / kv_heads;
  const T scale = T(1) / std::sqrt(static_cast<T>(d));
  // dQ of one (row, head) summed over the block's keys, then added to dQ: the row of dQ is read and
  // written once per block, while dK/dV rows, different for every key, are updated in place.
  std::vector<T> dq_acc(static_cast<std::size_t>(d));

  for (const AttentionBlockDesc& b : blocks) {
    for (std::int64_t i = 0; i < b.q_count; ++i) {
      const std::int64_t keys = visible_keys(b, i);
      if (keys == 0) continue;  // includes the rows the whole forward found empty (LSE = −inf)
      for (std::int64_t h = 0; h < heads; ++h) {
        const std::int64_t out = (b.out_row + i) * heads + h;
        const T* q_row = q.data() + ((b.q_row + i) * heads + h) * d;
        const T* do_row = d_o.data() + out * d;
        const T row_lse = lse[static_cast<std::size_t>(out)];
        const T row_d = dot(do_row, o.data() + out * d, d);
        const std::int64_t kv_offset = b.kv_row * kv_heads + h / group;
        std::ranges::fill(dq_acc, T(0));
        for (std::int64_t j = 0; j < keys; ++j) {
          const std::int64_t kv = (kv_offset + j * kv_heads) * d;
          const T* k_row = k.data() + kv;
          const T* v_row = v.data() + kv;
          const T p = std::exp(dot(q_row, k_row, d) * scale - row_lse);
          // Scaled once here rather than in both the dQ and the dK update.
          const T ds = p * (dot(do_row, v_row, d) - row_d) * scale;
          T* dk_row = dk.data() + kv;
          T* dv_row = dv.data() + kv;
          axpy(dv_row, p, do_row, d);
          axpy(dk_row, ds, q_row, d);
          axpy(dq_acc.data(), ds, k_row, d);
        }
        T* dq_row = dq.data() + ((b.q_row + i) * heads + h) * d;
        axpy(dq_row, T(1), dq_acc.data(), d);
      }
    }
  }
  return Status::success();
}

}  // namespace

Status attention_backward(const AttentionShape& shape, std::span<const AttentionBlockDesc> blocks,
                          std::span<const float> q, std::span<const float> k, std::span<const float> v,
                          std::span<const float> o, std::span<const float> d_o, std::span<const float> lse,
                          std::span<float> dq, std::span<float> dk, std::span<float> dv) {
  return attention_backward_impl<float>(shape, blocks, q, k, v, o, d_o, lse, dq, dk, dv);
}

Status attention_backward(const AttentionShape& shape, std::span<const AttentionBlockDesc> blocks,
                          std::span<const double> q, std::span<const double> k, std::span<const double> v,
                          std::span<const double> o, std::span<const double> d_o, std::span<const double> lse,
                          std::span<double> dq, std::span<double> dk, std::span<double> dv) {
  return attention_backward_impl<double>(shape, blocks, q, k, v, o, d_o, lse, dq, dk, dv);
}

}  // namespace zb::kernels
