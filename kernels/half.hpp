#pragma once
// Host-side bfloat16 and float16 conversions, bit-exact with the GPU's round-to-nearest-even, so tests
// and the reference executor can build device inputs and read device outputs without CUDA headers.
#include <cstdint>

namespace zb::kernels {

// float → bf16 bits, round to nearest even; NaN stays NaN (quiet).
std::uint16_t float_to_bf16_bits(float value);
float bf16_bits_to_float(std::uint16_t bits);

// float → IEEE binary16 bits, round to nearest even, overflow to ±inf, subnormals kept.
std::uint16_t float_to_fp16_bits(float value);
float fp16_bits_to_float(std::uint16_t bits);

}  // namespace zb::kernels
