#pragma once
// `calibrate --budget SECONDS` (docs/QUALIFY.md, "Calibration"): on CPU kernels at a large model's
// dimensions the full set of shapes takes tens of minutes, and nothing said how long. One quick probe of
// the smallest attention call and GEMM gives a cost per unit of work; from it every shape's time is
// estimated (attention by its query-key pairs, a GEMM by m·n·k), and the set is cut to the budget: first
// fewer timed runs per shape (5 to 3), then the largest shapes, never below three of each kind (a curve
// with a half-saturation point needs three), then down to one timed run per shape. What cannot be cut is
// said, not hidden.
#include <string>
#include <vector>

#include "core/qualify/calibration.hpp"

namespace zb::qualify {

// Seconds per unit of work, from the probe: one causal attention call, forward plus backward, per
// query-key pair; one GEMM per multiply-add (m·n·k).
struct ProbeCosts {
  double attention_pair_seconds = 0;
  double gemm_mnk_seconds = 0;
};

struct GemmDims {
  long long n = 0, k = 0;
};

struct BudgetedShapes {
  CalibrationShapes shapes;     // the set to measure
  double estimate_seconds = 0;  // what it should take
  double full_seconds = 0;      // what the full set would have taken
  bool within_budget = true;    // false: even the smallest set is over the budget (it is measured anyway)
};

// The estimated time of measuring `shapes` (every shape's runs plus its warm-up) over the layer's GEMMs.
[[nodiscard]] double estimate_seconds(const CalibrationShapes& shapes, const std::vector<GemmDims>& gemms,
                                      const ProbeCosts& probe);

// `full` cut to `budget_seconds` as described above (deterministic: the same probe, the same set).
[[nodiscard]] BudgetedShapes fit_to_budget(const CalibrationShapes& full, const std::vector<GemmDims>& gemms,
                                           const ProbeCosts& probe, double budget_seconds);

// "about 4.2 min for 5 attention shapes, 12 GEMM shapes, 3 runs each (the full set: about 9.5 min)".
[[nodiscard]] std::string describe(const BudgetedShapes& budgeted, const std::vector<GemmDims>& gemms);

}  // namespace zb::qualify
