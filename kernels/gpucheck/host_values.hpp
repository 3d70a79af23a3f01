#pragma once
// Host-side helpers shared by the GPU checks: random inputs rounded to the device type (the float64
// oracle sees the rounded values, so only the kernel's error is measured) and reading device halves back.
#include <cstdint>
#include <vector>

#include "core/common/rng.hpp"
#include "kernels/cuda_attention.hpp"
#include "kernels/half.hpp"

namespace zb::kernels::gpucheck {

inline std::uint16_t to_bits(cuda::ElementType type, double x) {
  return type == cuda::ElementType::bf16 ? float_to_bf16_bits(static_cast<float>(x))
                                         : float_to_fp16_bits(static_cast<float>(x));
}
inline double from_bits(cuda::ElementType type, std::uint16_t bits) {
  return type == cuda::ElementType::bf16 ? bf16_bits_to_float(bits) : fp16_bits_to_float(bits);
}

// Normal random values times `scale`, rounded to the device type; `values` receives the rounded values.
inline std::vector<std::uint16_t> random_device_values(Rng& rng, cuda::ElementType type, std::int64_t count,
                                                       std::vector<double>& values, double scale = 1.0) {
  std::vector<std::uint16_t> bits(static_cast<std::size_t>(count));
  values.resize(bits.size());
  for (std::size_t i = 0; i < bits.size(); ++i) {
    bits[i] = to_bits(type, scale * rng.normal());
    values[i] = from_bits(type, bits[i]);
  }
  return bits;
}

inline std::vector<double> halves_to_double(cuda::ElementType type, const std::vector<std::uint16_t>& bits) {
  std::vector<double> values(bits.size());
  for (std::size_t i = 0; i < bits.size(); ++i) values[i] = from_bits(type, bits[i]);
  return values;
}

}  // namespace zb::kernels::gpucheck
