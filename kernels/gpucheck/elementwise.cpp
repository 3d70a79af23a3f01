// Per-element tolerance comparison (see elementwise.hpp).
#include "kernels/gpucheck/elementwise.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace zb::kernels::gpucheck {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.6g", value);
  return text;
}

std::string where(std::string_view name, std::int64_t index, std::int64_t row_elements) {
  return std::string(name) + "[" + std::to_string(index) + "] (row " + std::to_string(index / row_elements) +
         ", element " + std::to_string(index % row_elements) + ")";
}

}  // namespace

std::string describe(const Tolerance& t) {
  std::string text = "atol " + number(t.atol);
  if (t.atol_scale > 0) text += " + " + number(t.atol_scale) + "·max|ref|";
  return text + ", rtol " + number(t.rtol);
}

ElementwiseResult compare_elementwise(std::string_view name, std::span<const double> gpu,
                                      std::span<const double> ref, const Tolerance& tolerance,
                                      std::int64_t row_elements) {
  ElementwiseResult result;
  row_elements = std::max<std::int64_t>(row_elements, 1);
  if (gpu.size() != ref.size()) {
    result.detail = std::string(name) + ": " + std::to_string(gpu.size()) + " GPU elements, " +
                    std::to_string(ref.size()) + " reference elements";
    return result;
  }
  double largest = 0;
  for (double r : ref)
    if (std::isfinite(r)) largest = std::max(largest, std::abs(r));
  const double atol = tolerance.atol + tolerance.atol_scale * largest;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double g = gpu[i], r = ref[i];
    const auto index = static_cast<std::int64_t>(i);
    if (std::isnan(r) || std::isinf(r) || std::isnan(g) || std::isinf(g)) {
      const bool same = (std::isnan(r) && std::isnan(g)) || (!std::isnan(r) && r == g);
      if (same) continue;
      result.worst_index = index;
      result.worst_gpu = g;
      result.worst_ref = r;
      result.worst_ratio = kInfinity;
      result.detail = where(name, index, row_elements) + " is " + number(g) + ", expected " + number(r) +
                      (std::isnan(r) ? " (no block writes it: it must keep the NaN poison)" : "");
      return result;
    }
    const double bound = atol + tolerance.rtol * std::abs(r);
    const double error = std::abs(g - r);
    const double ratio = bound > 0 ? error / bound : (error > 0 ? kInfinity : 0);
    if (ratio > result.worst_ratio || result.worst_index < 0) {
      result.worst_ratio = ratio;
      result.worst_index = index;
      result.worst_gpu = g;
      result.worst_ref = r;
      result.bound = bound;
    }
  }
  result.passed = result.worst_ratio <= 1.0;
  if (!result.passed)
    result.detail = "worst " + where(name, result.worst_index, row_elements) + ": GPU " +
                    number(result.worst_gpu) + ", reference " + number(result.worst_ref) + ", |error| " +
                    number(std::abs(result.worst_gpu - result.worst_ref)) + " > bound " +
                    number(result.bound) + " (" + describe(tolerance) + ")";
  return result;
}

}  // namespace zb::kernels::gpucheck
