#pragma once
// Per-element tolerance comparison for the GPU checks: every element must satisfy
//   |gpu − ref| ≤ atol + rtol·|ref|
// and the report names the worst element (largest ratio of its error to its bound) and its index, so a
// few wrong rows cannot hide inside a norm. Pure host code (no CUDA), tested on CPU machines too.
//
// `atol` is absolute; `atol_scale` adds atol_scale·max|ref| to it, for outputs whose magnitude depends
// on the case (gradients grow with the number of keys, O shrinks with it). NaN in `ref` marks elements
// that must stay unwritten (the GPU side must then be NaN too, the poison); ±inf must match exactly
// (an empty row's LSE is −inf).
#include <cstdint>
#include <span>
#include <string>

namespace zb::kernels::gpucheck {

struct Tolerance {
  double atol = 0;
  double rtol = 0;
  double atol_scale = 0;
};

struct ElementwiseResult {
  bool passed = false;
  double worst_ratio = 0;  // max over elements of |gpu − ref| / bound (≤ 1 passes)
  std::int64_t worst_index = -1;
  double worst_gpu = 0, worst_ref = 0;
  double bound = 0;    // the bound at the worst element
  std::string detail;  // the failure, naming the tensor and element; empty on success
};

// `name` names the tensor in the detail ("O", "dK"...); `row_elements` turns the flat index into
// "row r, element c" in the message (heads·head_dim for O, heads for LSE).
ElementwiseResult compare_elementwise(std::string_view name, std::span<const double> gpu,
                                      std::span<const double> ref, const Tolerance& tolerance,
                                      std::int64_t row_elements);

std::string describe(const Tolerance& tolerance);

}  // namespace zb::kernels::gpucheck
