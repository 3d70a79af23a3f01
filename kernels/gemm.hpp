#pragma once
// A plain GEMM for the reference executor's projections: C = A · B, row-major, A m×k, B k×n, C m×n.
// Accumulates in the element type in a fixed order (i, j, then p ascending), so results are
// deterministic across runs and ranks.
#include <cstdint>
#include <span>

#include "kernels/status.hpp"

namespace zb::kernels {

Status gemm(std::int64_t m, std::int64_t n, std::int64_t k, std::span<const float> a,
            std::span<const float> b, std::span<float> c);
Status gemm(std::int64_t m, std::int64_t n, std::int64_t k, std::span<const double> a,
            std::span<const double> b, std::span<double> c);

}  // namespace zb::kernels
