#pragma once
// Counts drawn at once instead of one draw per item: the binomial and the multinomial the MoE router
// (moe_router.hpp) needs to place a slice's token × top-k choices on experts in O(experts), not O(tokens).
// Written out on the project's Rng, so the counts are the same on every platform (std::*_distribution is
// implementation-defined).
#include <cstdint>
#include <span>
#include <vector>

#include "core/common/rng.hpp"

namespace zb {

// Binomial(n, p) for n ≥ 0, p in [0, 1] (clamped). Exact by inversion while the smaller tail's mean,
// n·min(p, 1 − p), is below 30; above, the normal approximation N(np, np(1 − p)) rounded and clamped to
// [0, n], whose error in that range is far below the sampling noise a load model is about. One or two
// uniforms per exact draw's mean; one per approximate draw.
[[nodiscard]] std::int64_t binomial(Rng& rng, std::int64_t n, double p);

// `n` items put on the outcomes with probabilities ∝ `weights` (≥ 0, positive sum), none taking more than
// `cap`. Drawn as conditional binomials in index order, so the counts sum to n exactly; then each outcome
// above `cap` gives its excess to the outcomes below it, most probable first (ties by index). The cap is
// how top-k's distinct experts show at the level of counts: a slice of T tokens cannot give one expert
// more than T of its T·k choices. Throws std::invalid_argument unless 0 ≤ n ≤ cap × weights.size() and (for n
// > 0) some weight is positive.
[[nodiscard]] std::vector<std::int64_t> capped_multinomial(Rng& rng, std::int64_t n,
                                                           std::span<const double> weights, std::int64_t cap);
// The same draw into `counts` (one per weight), for callers that draw many times with one buffer.
void capped_multinomial_into(Rng& rng, std::int64_t n, std::span<const double> weights, std::int64_t cap,
                             std::span<std::int64_t> counts);

}  // namespace zb
