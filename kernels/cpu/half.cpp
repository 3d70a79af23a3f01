// Host bf16/fp16 conversions with round-to-nearest-even, matching __float2bfloat16_rn / __float2half_rn.
#include "kernels/half.hpp"

#include <bit>
#include <cmath>

namespace zb::kernels {

std::uint16_t float_to_bf16_bits(float value) {
  const auto bits = std::bit_cast<std::uint32_t>(value);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u)
    return static_cast<std::uint16_t>((bits >> 16) | 0x0040u);  // quiet NaN
  // Adding 0x7FFF plus the lowest kept bit rounds to nearest, ties to even; overflow carries into the
  // exponent, and the largest finite values round to infinity as on the GPU.
  const std::uint32_t rounding = 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>((bits + rounding) >> 16);
}

float bf16_bits_to_float(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

std::uint16_t float_to_fp16_bits(float value) {
  const auto bits = std::bit_cast<std::uint32_t>(value);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const std::uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude >= 0x7F800000u)  // inf or NaN
    return static_cast<std::uint16_t>(sign | (magnitude > 0x7F800000u ? 0x7E00u : 0x7C00u));
  if (magnitude >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);  // ≥ 65520 rounds to inf
  if (magnitude < 0x38800000u) {
    // Below the smallest normal (2^-14): the subnormal's integer mantissa is value·2^24, rounded to
    // nearest even by nearbyint (the scaling by a power of two is exact). 1024 encodes 2^-14 correctly.
    const float scaled = std::bit_cast<float>(magnitude) * 16777216.0f;
    return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(std::nearbyint(scaled)));
  }
  const std::uint32_t exponent = (magnitude >> 23) - 127u + 15u;
  const std::uint32_t mantissa = magnitude & 0x7FFFFFu;
  std::uint32_t half = (exponent << 10) | (mantissa >> 13);
  const std::uint32_t dropped = mantissa & 0x1FFFu;
  if (dropped > 0x1000u || (dropped == 0x1000u && (half & 1u))) ++half;  // a carry moves into the exponent
  return static_cast<std::uint16_t>(sign | half);
}

float fp16_bits_to_float(std::uint16_t bits) {
  const std::uint32_t sign = (static_cast<std::uint32_t>(bits) & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1Fu;
  const std::uint32_t mantissa = bits & 0x3FFu;
  if (exponent == 0) {
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign != 0 ? -magnitude : magnitude;
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent - 15u + 127u) << 23) | (mantissa << 13));
}

}  // namespace zb::kernels
