#pragma once
// A deterministic random number generator whose output is the same on every platform and compiler.
// std::*_distribution is implementation-defined, so every transform here is written out.
#include <cmath>
#include <cstdint>
#include <numbers>

namespace zb {

// The splitmix64 finaliser: a bijection of 64-bit words that spreads every input bit over the output. What
// the generator below seeds itself with, and what code that names a value by its coordinates hashes with.
constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// xoshiro256** seeded through splitmix64. Streams are derived from (seed, stream ids) so that, for
// example, iteration 7 of a workload can be drawn without drawing iterations 0..6 first.
class Rng {
 public:
  explicit Rng(std::uint64_t seed, std::uint64_t stream = 0) {
    std::uint64_t x = seed ^ (0x9E3779B97F4A7C15ULL * (stream + 1));
    for (auto& word : s_) word = splitmix64(x);
  }

  std::uint64_t next_u64() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

  // Uniform in (0, 1]: safe to take the logarithm of.
  double uniform_open0() { return 1.0 - uniform(); }

  // Uniform integer in [0, n), n > 0, without modulo bias (Lemire's method with rejection).
  std::uint64_t below(std::uint64_t n) {
    std::uint64_t x = next_u64();
    __uint128_t m = static_cast<__uint128_t>(x) * n;
    auto low = static_cast<std::uint64_t>(m);
    if (low < n) {
      const std::uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        x = next_u64();
        m = static_cast<__uint128_t>(x) * n;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }

  // Standard normal by Box–Muller (one value per call; the pair's second value is discarded so that
  // the sequence depends on the call count alone).
  double normal() {
    const double u1 = uniform_open0();
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static std::uint64_t splitmix64(std::uint64_t& x) { return mix64(x += 0x9E3779B97F4A7C15ULL); }
  std::uint64_t s_[4]{};
};

}  // namespace zb
