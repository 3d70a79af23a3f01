// CPU attention kernels, float32, single thread: forward and backward of one causal sequence as one
// block, which is how the reference executor calls them (its default dims are heads 2, head_dim 16).
// FLOPs follow the FlashAttention convention (docs/KERNELS.md): forward 4·s²·heads·d / 2 for a causal
// sequence, backward 2.5× that (five s×s×d products instead of two), so GFLOP/s compare across passes.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "core/common/rng.hpp"
#include "kernels/attention.hpp"
#include "kernels/attention_backward.hpp"

namespace {

using zb::kernels::AttentionBlockDesc;
using zb::kernels::AttentionMask;
using zb::kernels::AttentionShape;

struct Problem {
  AttentionShape shape;
  std::vector<AttentionBlockDesc> blocks;
  std::vector<float> q, k, v, o, lse, d_o, dq, dk, dv;
};

std::vector<float> random_values(zb::Rng& rng, std::int64_t count) {
  std::vector<float> values(static_cast<std::size_t>(count));
  for (float& x : values) x = static_cast<float>(rng.normal());
  return values;
}

Problem causal_problem(std::int64_t length, int heads, int kv_heads, int head_dim) {
  Problem p;
  p.shape = {heads, kv_heads, head_dim, length, length, length};
  p.blocks = {{0, length, 0, length, 0, 0, AttentionMask::causal, 0}};
  zb::Rng rng(7);
  p.q = random_values(rng, length * heads * head_dim);
  p.k = random_values(rng, length * kv_heads * head_dim);
  p.v = random_values(rng, length * kv_heads * head_dim);
  p.d_o = random_values(rng, length * heads * head_dim);
  p.o.resize(p.q.size());
  p.lse.resize(static_cast<std::size_t>(length * heads));
  p.dq.resize(p.q.size());
  p.dk.resize(p.k.size());
  p.dv.resize(p.k.size());
  return p;
}

void forward(Problem& p) {
  const auto status = zb::kernels::attention_forward(p.shape, p.blocks, p.q, p.k, p.v, p.o, p.lse);
  if (!status) throw std::runtime_error(status.message());
}

double causal_forward_flops(const AttentionShape& s) {
  return 4.0 * static_cast<double>(s.q_tokens) * static_cast<double>(s.q_tokens) * s.heads * s.head_dim / 2;
}

void attention_forward_causal(benchmark::State& state) {
  Problem p = causal_problem(state.range(0), static_cast<int>(state.range(1)),
                             static_cast<int>(state.range(2)), static_cast<int>(state.range(3)));
  for (auto _ : state) {
    forward(p);
    benchmark::DoNotOptimize(p.o.data());
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(causal_forward_flops(p.shape) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void attention_backward_causal(benchmark::State& state) {
  Problem p = causal_problem(state.range(0), static_cast<int>(state.range(1)),
                             static_cast<int>(state.range(2)), static_cast<int>(state.range(3)));
  forward(p);
  for (auto _ : state) {
    // Accumulating into the same gradients every iteration is fine for timing; zeroing would be O(rows).
    const auto status = zb::kernels::attention_backward(p.shape, p.blocks, p.q, p.k, p.v, p.o, p.d_o, p.lse,
                                                        p.dq, p.dk, p.dv);
    if (!status) throw std::runtime_error(status.message());
    benchmark::DoNotOptimize(p.dq.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.5 * causal_forward_flops(p.shape) * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

// {sequence length, heads, kv_heads, head_dim}
void shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"len", "heads", "kv_heads", "d"});
  b->Args({4096, 2, 2, 16});  // the reference executor's default dims
  b->Args({1024, 8, 2, 64});
  b->Args({1024, 8, 2, 128});
  b->Unit(benchmark::kMillisecond);
}

}  // namespace

BENCHMARK(attention_forward_causal)->Apply(shapes);
BENCHMARK(attention_backward_causal)->Apply(shapes);

BENCHMARK_MAIN();
