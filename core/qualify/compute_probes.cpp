#include "core/qualify/compute_probes.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fmt/format.h>

#include "core/qualify/probe_support.hpp"
#include "kernels/attention.hpp"
#include "kernels/gemm.hpp"
#include "kernels/status.hpp"

namespace zb::qualify {
namespace {

using Clock = std::chrono::steady_clock;

// The best of at least `repetitions` runs and of at least 0.2 s of them: on a host whose cores other
// work shares, one quiet run is enough for the figure to be the host's, not the neighbours'.
template <typename Run>
double best_seconds(int repetitions, Run run) {
  run();  // warm-up: page faults, caches
  double best = INFINITY, spent = 0;
  for (int r = 0; r < repetitions || (spent < 0.2 && r < 100 * repetitions); ++r) {
    const auto start = Clock::now();
    run();
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    best = std::min(best, seconds);
    spent += seconds;
  }
  return best;
}

Measurement gemm_figure(int node, int gpu, int size, int repetitions) {
  const auto n = static_cast<std::size_t>(size);
  std::vector<float> a(n * n), b(n * n), c(n * n);
  fill_probe_values(a, 1);
  fill_probe_values(b, 2);
  const double seconds = best_seconds(repetitions, [&] {
    kernels::throw_if_error(kernels::gemm(size, size, size, a, b, c), "qualify gemm");
  });
  const double flops = 2.0 * size * static_cast<double>(size) * size;
  return {.probe = Probe::gemm,
          .subject = fmt::format("node {} GPU {}", node, gpu),
          .shape = fmt::format("m=n=k={}", size),
          .node = node,
          .gpu = gpu,
          .value = flops / seconds};
}

Measurement attention_figure(int node, int gpu, int tokens, int repetitions) {
  const kernels::AttentionShape shape{
      .heads = 2, .kv_heads = 2, .head_dim = 64, .q_tokens = tokens, .kv_tokens = tokens, .out_rows = tokens};
  const kernels::AttentionBlockDesc block = kernels::causal_self_block(tokens);
  const auto elements = static_cast<std::size_t>(tokens) * 2 * 64;
  std::vector<float> q(elements), k(elements), v(elements), o(elements),
      lse(static_cast<std::size_t>(tokens) * 2);
  fill_probe_values(q, 3);
  fill_probe_values(k, 4);
  fill_probe_values(v, 5);
  const double seconds = best_seconds(repetitions, [&] {
    kernels::throw_if_error(kernels::attention_forward(shape, {&block, 1}, q, k, v, o, lse),
                            "qualify attention");
  });
  const double pairs = static_cast<double>(tokens) * (tokens + 1) / 2.0;
  const double flops = 4.0 * shape.head_dim * shape.heads * pairs;
  return {.probe = Probe::attention,
          .subject = fmt::format("node {} GPU {}", node, gpu),
          .shape = fmt::format("causal {} tokens", tokens),
          .node = node,
          .gpu = gpu,
          .value = flops / seconds};
}

}  // namespace

std::vector<Measurement> run_compute_probes(int node, int gpu, const ComputeShapes& shapes) {
  std::vector<Measurement> out;
  for (const int size : shapes.gemm_sizes) out.push_back(gemm_figure(node, gpu, size, shapes.repetitions));
  for (const int tokens : shapes.attention_tokens)
    out.push_back(attention_figure(node, gpu, tokens, shapes.repetitions));
  return out;
}

}  // namespace zb::qualify
