#include "core/qualify/calibration_budget.hpp"

#include <fmt/format.h>

namespace zb::qualify {
namespace {

constexpr int kMinimumShapes = 3;
constexpr int kPreferredRepetitions = 3;  // kept until the shapes are cut to three of each kind

double causal_pairs(int tokens) {
  return static_cast<double>(tokens) * (tokens + 1) / 2.0;
}

std::string minutes(double seconds) {
  return seconds < 120 ? fmt::format("{:.0f} s", seconds) : fmt::format("{:.1f} min", seconds / 60);
}

}  // namespace

double estimate_seconds(const CalibrationShapes& shapes, const std::vector<GemmDims>& gemms,
                        const ProbeCosts& probe) {
  const double runs = shapes.repetitions + 1.0;  // the warm-up runs too
  double total = 0;
  for (const int tokens : shapes.attention_tokens)
    total += runs * probe.attention_pair_seconds * causal_pairs(tokens);
  for (const GemmDims& g : gemms)
    for (const int m : shapes.gemm_rows)
      total += runs * probe.gemm_mnk_seconds * static_cast<double>(m) * static_cast<double>(g.n) *
               static_cast<double>(g.k);
  return total;
}

BudgetedShapes fit_to_budget(const CalibrationShapes& full, const std::vector<GemmDims>& gemms,
                             const ProbeCosts& probe, double budget_seconds) {
  BudgetedShapes out;
  out.shapes = full;
  out.full_seconds = estimate_seconds(full, gemms, probe);
  const auto over = [&] { return estimate_seconds(out.shapes, gemms, probe) > budget_seconds; };
  while (over() && out.shapes.repetitions > kPreferredRepetitions) --out.shapes.repetitions;
  // The largest shapes cost the most; drop whichever kind's largest shape costs more, one at a time.
  while (over()) {
    std::vector<int>& attention = out.shapes.attention_tokens;
    std::vector<int>& rows = out.shapes.gemm_rows;
    const bool can_attention = static_cast<int>(attention.size()) > kMinimumShapes;
    const bool can_gemm = static_cast<int>(rows.size()) > kMinimumShapes && !gemms.empty();
    if (!can_attention && !can_gemm) break;
    double attention_cost = 0, gemm_cost = 0;
    if (can_attention) attention_cost = probe.attention_pair_seconds * causal_pairs(attention.back());
    if (can_gemm)
      for (const GemmDims& g : gemms)
        gemm_cost +=
            probe.gemm_mnk_seconds * rows.back() * static_cast<double>(g.n) * static_cast<double>(g.k);
    if (can_attention && (!can_gemm || attention_cost >= gemm_cost))
      attention.pop_back();
    else
      rows.pop_back();
  }
  // Last, a single timed run per shape (after its warm-up): a noisier median, but a calibration.
  while (over() && out.shapes.repetitions > 1) --out.shapes.repetitions;
  out.estimate_seconds = estimate_seconds(out.shapes, gemms, probe);
  out.within_budget = out.estimate_seconds <= budget_seconds;
  return out;
}

std::string describe(const BudgetedShapes& b, const std::vector<GemmDims>& gemms) {
  return fmt::format(
      "about {} for {} attention shapes, {} GEMM shapes, {} runs each (the full set: about {})",
      minutes(b.estimate_seconds), b.shapes.attention_tokens.size(), b.shapes.gemm_rows.size() * gemms.size(),
      b.shapes.repetitions, minutes(b.full_seconds));
}

}  // namespace zb::qualify
