#pragma once
// Helpers of the backward kernel tests: the forward results an executor hands to the backward (O and
// LSE of each output row merged over every block naming it, by the kernels), a backward call into
// zeroed gradients, and inputs rounded to float so the float64 oracle sees exactly what the float32
// kernel sees.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <span>
#include <vector>

#include "kernel_test_support.hpp"
#include "kernels/attention_backward.hpp"

namespace zb::kernels::testing {

inline std::vector<double> round_to_float(std::span<const double> values) {
  std::vector<double> out(values.size());
  std::ranges::transform(values, out.begin(),
                         [](double x) { return static_cast<double>(static_cast<float>(x)); });
  return out;
}

// Q, K, V and dO drawn from `rng`, rounded to float.
struct BackwardInputs {
  AttentionInputs qkv;
  std::vector<double> d_o;
};

inline BackwardInputs random_backward_inputs(Rng& rng, const AttentionShape& shape) {
  BackwardInputs in;
  const AttentionInputs drawn = random_inputs(rng, shape);
  in.qkv = {round_to_float(drawn.q), round_to_float(drawn.k), round_to_float(drawn.v)};
  in.d_o = round_to_float(random_normal(rng, shape.out_rows * shape.heads * shape.head_dim));
  return in;
}

template <typename T>
std::vector<T> as(std::span<const double> values) {
  return std::vector<T>(values.begin(), values.end());
}

template <typename T>
struct ForwardResult {
  std::vector<T> o, lse;
};

// Each block forward on its own, merged into the rows it names; rows no block names stay O = 0,
// LSE = −inf (empty).
template <typename T>
ForwardResult<T> merged_forward(const AttentionShape& shape, std::span<const AttentionBlockDesc> blocks,
                                std::span<const T> q, std::span<const T> k, std::span<const T> v) {
  const auto o_size = static_cast<std::size_t>(shape.out_rows * shape.heads * shape.head_dim);
  const auto lse_size = static_cast<std::size_t>(shape.out_rows * shape.heads);
  ForwardResult<T> merged{std::vector<T>(o_size, T(0)),
                          std::vector<T>(lse_size, -std::numeric_limits<T>::infinity())};
  for (const AttentionBlockDesc& b : blocks) {
    ForwardResult<T> part{std::vector<T>(o_size, T(0)),
                          std::vector<T>(lse_size, -std::numeric_limits<T>::infinity())};
    const Status s =
        attention_forward(shape, std::span(&b, 1), q, k, v, std::span<T>(part.o), std::span<T>(part.lse));
    EXPECT_TRUE(s.ok()) << s.message();
    const Status m =
        merge_partials(shape.heads, shape.head_dim, std::span<T>(merged.o), std::span<T>(merged.lse),
                       std::span<const T>(part.o), std::span<const T>(part.lse));
    EXPECT_TRUE(m.ok()) << m.message();
  }
  return merged;
}

template <typename T>
struct Gradients {
  std::vector<T> dq, dk, dv;
};

template <typename T>
Gradients<T> zero_gradients(const AttentionShape& shape) {
  const auto q_size = static_cast<std::size_t>(shape.q_tokens * shape.heads * shape.head_dim);
  const auto kv_size = static_cast<std::size_t>(shape.kv_tokens * shape.kv_heads * shape.head_dim);
  return {std::vector<T>(q_size, T(0)), std::vector<T>(kv_size, T(0)), std::vector<T>(kv_size, T(0))};
}

// Backward of `blocks` accumulated into `grads`.
template <typename T>
void accumulate_backward(const AttentionShape& shape, std::span<const AttentionBlockDesc> blocks,
                         std::span<const T> q, std::span<const T> k, std::span<const T> v,
                         const ForwardResult<T>& fwd, std::span<const T> d_o, Gradients<T>& grads) {
  const Status s =
      attention_backward(shape, blocks, q, k, v, std::span<const T>(fwd.o), d_o, std::span<const T>(fwd.lse),
                         std::span<T>(grads.dq), std::span<T>(grads.dk), std::span<T>(grads.dv));
  ASSERT_TRUE(s.ok()) << s.message();
}

// Forward (merged) then backward of `blocks` in element type T, from the float-rounded inputs.
template <typename T>
Gradients<T> forward_backward(const AttentionShape& shape, std::span<const AttentionBlockDesc> blocks,
                              const BackwardInputs& in) {
  const std::vector<T> q = as<T>(in.qkv.q), k = as<T>(in.qkv.k), v = as<T>(in.qkv.v), d_o = as<T>(in.d_o);
  const ForwardResult<T> fwd = merged_forward<T>(shape, blocks, q, k, v);
  Gradients<T> grads = zero_gradients<T>(shape);
  accumulate_backward<T>(shape, blocks, q, k, v, fwd, d_o, grads);
  return grads;
}

}  // namespace zb::kernels::testing
