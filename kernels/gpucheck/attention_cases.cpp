// The standard GPU cases, the merge and pack checks, and the forward timing (see attention_check.hpp).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/common/rng.hpp"
#include "kernels/gpucheck/attention_check.hpp"
#include "kernels/gpucheck/device_buffer.hpp"
#include "kernels/half.hpp"

namespace zb::kernels::gpucheck {
namespace {

using cuda::ElementType;
constexpr AttentionMask kCausal = AttentionMask::causal;
constexpr AttentionMask kFull = AttentionMask::full;

// Sequences packed back to back, each attending causally to itself.
AttentionCase packed_causal(std::string name, int heads, int kv_heads, int head_dim,
                            const std::vector<std::int64_t>& lengths) {
  AttentionCase c{
      std::move(name), {heads, kv_heads, head_dim, 0, 0, 0}, {}, ElementType::bf16, ElementType::f32};
  std::int64_t row = 0;
  for (std::int64_t length : lengths) {
    c.blocks.push_back({row, length, row, length, 0, 0, kCausal, row});
    row += length;
  }
  c.shape.q_tokens = c.shape.kv_tokens = c.shape.out_rows = row;
  return c;
}

}  // namespace

std::vector<AttentionCase> standard_cases() {
  std::vector<AttentionCase> cases;
  const std::vector<std::int64_t> lengths{1, 77, 300, 129, 64, 200};  // not multiples of 64/128, one token
  for (int head_dim : {64, 128}) {
    for (int ratio : {1, 4, 8}) {
      cases.push_back(
          packed_causal("packed causal d" + std::to_string(head_dim) + " gqa" + std::to_string(ratio), 8,
                        8 / ratio, head_dim, lengths));
    }
  }
  // One sequence of 700 tokens cut like a context-parallel plan, with absolute positions: a late query
  // chunk against all earlier keys, a key range that starts after some queries (empty rows), a full
  // block, and 30 output rows no block writes (they must stay poisoned).
  for (int head_dim : {64, 128}) {
    AttentionCase c{"offsets d" + std::to_string(head_dim),
                    {8, 2, head_dim, 700, 700, 730},
                    {},
                    ElementType::bf16,
                    ElementType::f32};
    c.blocks = {{500, 200, 0, 700, 500, 0, kCausal, 0},   {0, 100, 0, 100, 0, 0, kCausal, 200},
                {100, 150, 0, 250, 100, 0, kCausal, 300}, {300, 10, 305, 95, 300, 305, kCausal, 450},
                {250, 50, 0, 100, 250, 0, kFull, 460},    {310, 190, 130, 170, 310, 130, kCausal, 510}};
    cases.push_back(c);
  }
  AttentionCase one{"one-token blocks", {4, 1, 128, 6, 6, 6}, {}, ElementType::bf16, ElementType::f32};
  one.blocks = {{0, 1, 0, 1, 7, 7, kCausal, 0}, {1, 1, 1, 1, 7, 8, kCausal, 1},
                {2, 1, 2, 1, 0, 9, kFull, 2},   {3, 1, 0, 6, 5, 0, kCausal, 3},
                {4, 1, 5, 1, 0, 0, kCausal, 4}, {5, 1, 0, 0, 0, 0, kCausal, 5}};
  cases.push_back(one);
  AttentionCase f16 = packed_causal("fp16 in, fp16 out d128", 8, 2, 128, lengths);
  f16.input_type = f16.output_type = ElementType::f16;
  cases.push_back(f16);
  AttentionCase bf16_out = packed_causal("bf16 in, bf16 out d64", 4, 4, 64, lengths);
  bf16_out.output_type = ElementType::bf16;
  cases.push_back(bf16_out);
  AttentionCase f16_f32 = packed_causal("fp16 in, f32 out d64 gqa8", 8, 1, 64, {513, 1000});
  f16_f32.input_type = ElementType::f16;
  cases.push_back(f16_f32);
  return cases;
}

CheckResult check_merge(int head_dim, std::uint64_t seed) {
  // Queries 300..500 of a sequence against keys [0, 500) split at 137: two partials, merged on the GPU.
  const std::int64_t length = 500, q0 = 300, split = 137;
  const AttentionShape shape{8, 4, head_dim, length, length, length - q0};
  AttentionCase whole{
      "merge", shape, {{q0, length - q0, 0, length, q0, 0, kCausal, 0}}, ElementType::bf16, ElementType::f32};
  CheckResult reference_run = check_attention(whole, seed);  // also proves the unsplit kernel
  if (!reference_run.passed) return reference_run;

  Rng rng(seed);
  const auto draw = [&](std::int64_t count) {
    std::vector<std::uint16_t> bits(static_cast<std::size_t>(count));
    for (auto& b : bits) b = float_to_bf16_bits(static_cast<float>(rng.normal()));
    return bits;
  };
  const auto q = draw(length * shape.heads * head_dim), k = draw(length * shape.kv_heads * head_dim),
             v = draw(length * shape.kv_heads * head_dim);
  std::vector<double> qd(q.size()), kd(k.size()), vd(v.size());
  for (std::size_t i = 0; i < q.size(); ++i) qd[i] = bf16_bits_to_float(q[i]);
  for (std::size_t i = 0; i < k.size(); ++i) {
    kd[i] = bf16_bits_to_float(k[i]);
    vd[i] = bf16_bits_to_float(v[i]);
  }
  const std::size_t o_count = static_cast<std::size_t>(shape.out_rows * shape.heads * head_dim);
  const std::size_t lse_count = static_cast<std::size_t>(shape.out_rows * shape.heads);
  std::vector<double> o_ref(o_count), lse_ref(lse_count);
  if (Status st = attention_forward(shape, whole.blocks, std::span<const double>(qd),
                                    std::span<const double>(kd), std::span<const double>(vd),
                                    std::span<double>(o_ref), std::span<double>(lse_ref));
      !st)
    return {false, 0, 0, st.message()};

  DeviceBuffer dq, dk, dv, o_a, lse_a, o_b, lse_b;
  for (Status st :
       {dq.allocate(q.size() * 2, "q"), dk.allocate(k.size() * 2, "k"), dv.allocate(v.size() * 2, "v"),
        o_a.allocate(o_count * 4, "o_a"), lse_a.allocate(lse_count * 4, "lse_a"),
        o_b.allocate(o_count * 4, "o_b"), lse_b.allocate(lse_count * 4, "lse_b")}) {
    if (!st) return {false, 0, 0, st.message()};
  }
  for (Status st : {dq.upload(q.data(), "q"), dk.upload(k.data(), "k"), dv.upload(v.data(), "v"),
                    o_a.poison("o_a"), o_b.poison("o_b"), lse_a.poison("lse_a"), lse_b.poison("lse_b")}) {
    if (!st) return {false, 0, 0, st.message()};
  }
  const std::vector<AttentionBlockDesc> first{{q0, length - q0, 0, split, q0, 0, kCausal, 0}};
  const std::vector<AttentionBlockDesc> second{
      {q0, length - q0, split, length - split, q0, split, kCausal, 0}};
  cuda::AttentionSchedule schedule_a, schedule_b;
  const cuda::AttentionTensors ta{ElementType::bf16,
                                  dq.get(),
                                  dk.get(),
                                  dv.get(),
                                  ElementType::f32,
                                  o_a.get(),
                                  static_cast<float*>(lse_a.get())};
  cuda::AttentionTensors tb = ta;
  tb.o = o_b.get();
  tb.lse = static_cast<float*>(lse_b.get());
  for (Status st :
       {schedule_a.build(shape, first), schedule_b.build(shape, second),
        cuda::attention_forward(schedule_a, ta, nullptr), cuda::attention_forward(schedule_b, tb, nullptr),
        cuda::merge_partials(shape.out_rows, shape.heads, head_dim, static_cast<float*>(o_a.get()),
                             static_cast<float*>(lse_a.get()), static_cast<const float*>(o_b.get()),
                             static_cast<const float*>(lse_b.get()), nullptr),
        cuda::synchronize(nullptr, "check_merge")}) {
    if (!st) return {false, 0, 0, st.message()};
  }
  std::vector<float> of(o_count), lf(lse_count);
  if (Status st = o_a.download(of.data(), "o_a"); !st) return {false, 0, 0, st.message()};
  if (Status st = lse_a.download(lf.data(), "lse_a"); !st) return {false, 0, 0, st.message()};
  const ElementwiseResult o =
      compare_elementwise("merged O", std::vector<double>(of.begin(), of.end()), o_ref, kOutputTolerance,
                          static_cast<std::int64_t>(shape.heads) * head_dim);
  const ElementwiseResult l = compare_elementwise("merged LSE", std::vector<double>(lf.begin(), lf.end()),
                                                  lse_ref, kLseTolerance, shape.heads);
  CheckResult result{o.passed && l.passed, o.worst_ratio, l.worst_ratio, o.detail};
  if (!l.passed) result.detail += (result.detail.empty() ? "" : "; ") + l.detail;
  return result;
}

}  // namespace zb::kernels::gpucheck
