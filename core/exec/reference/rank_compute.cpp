// RankRunner's compute stream: attention (forward or backward) on real rows, and the GEMM stand-in.
#include <algorithm>
#include <vector>

#include "core/exec/reference/attention_backward_op.hpp"
#include "core/exec/reference/attention_op.hpp"
#include "core/exec/reference/rank_runner.hpp"
#include "kernels/gemm.hpp"

namespace zb::reference {

using lower::Instr;
using lower::InstrKind;

void RankRunner::run_compute(int id) {
  const Instr& in = state_.instr(id);
  const double start = state_.seconds_since_start();
  if (in.kind == InstrKind::attention) {
    const double flops =
        in.pass == Pass::fwd ? run_attention(state_, id) : run_attention_backward(state_, id);
    state_.record(id, Track::compute, EventCategory::attention, start, 0, flops);
  } else {
    // A stand-in for the projection (forward, data or weight gradient): the CPU GEMM on capped dims with
    // fixed inputs. Its output is not used (Q, K, V and dO come from the generator), it keeps the compute
    // stream's shape.
    const std::int64_t cap = state_.in.options.gemm_max_dim;
    const std::int64_t m = std::clamp<std::int64_t>(in.m, 1, cap), n = std::clamp<std::int64_t>(in.n, 1, cap),
                       k = std::clamp<std::int64_t>(in.k, 1, cap);
    std::vector<float> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n)),
        c(static_cast<std::size_t>(m * n));
    for (std::size_t j = 0; j < a.size(); ++j) a[j] = static_cast<float>(j % 7) * 0.125F - 0.375F;
    for (std::size_t j = 0; j < b.size(); ++j) b[j] = static_cast<float>(j % 5) * 0.25F - 0.5F;
    kernels::throw_if_error(kernels::gemm(m, n, k, a, b, c), state_.where(id));
    state_.record(id, Track::compute, EventCategory::gemm, start, 0, 2.0 * static_cast<double>(m * n * k));
  }
  done(id);
}

}  // namespace zb::reference
