// CPU GEMM, C = A·B row-major. The i-p-j loop order streams rows of B and C (cache-friendly) while each
// C element still accumulates over p in ascending order, so the result is deterministic.
#include <algorithm>
#include <string>

#include "kernels/gemm.hpp"

namespace zb::kernels {
namespace {

template <typename T>
Status gemm_impl(std::int64_t m, std::int64_t n, std::int64_t k, std::span<const T> a, std::span<const T> b,
                 std::span<T> c) {
  const std::string entry = "gemm: ";
  if (m < 0 || n < 0 || k < 0)
    return Status::failure(entry + "m, n, k must be >= 0 (got " + std::to_string(m) + ", " +
                           std::to_string(n) + ", " + std::to_string(k) + ")");
  const auto expect = [&](const char* name, std::size_t got, std::int64_t want) {
    if (static_cast<std::int64_t>(got) == want) return Status::success();
    return Status::failure(entry + name + " has " + std::to_string(got) + " elements, expected " +
                           std::to_string(want));
  };
  for (Status s :
       {expect("a", a.size(), m * k), expect("b", b.size(), k * n), expect("c", c.size(), m * n)}) {
    if (!s) return s;
  }
  std::ranges::fill(c, T(0));
  for (std::int64_t i = 0; i < m; ++i) {
    T* c_row = c.data() + i * n;
    for (std::int64_t p = 0; p < k; ++p) {
      const T a_ip = a[static_cast<std::size_t>(i * k + p)];
      const T* b_row = b.data() + p * n;
      for (std::int64_t j = 0; j < n; ++j) c_row[j] += a_ip * b_row[j];
    }
  }
  return Status::success();
}

}  // namespace

Status gemm(std::int64_t m, std::int64_t n, std::int64_t k, std::span<const float> a,
            std::span<const float> b, std::span<float> c) {
  return gemm_impl<float>(m, n, k, a, b, c);
}

Status gemm(std::int64_t m, std::int64_t n, std::int64_t k, std::span<const double> a,
            std::span<const double> b, std::span<double> c) {
  return gemm_impl<double>(m, n, k, a, b, c);
}

}  // namespace zb::kernels
