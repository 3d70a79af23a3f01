#pragma once
// The fits of `zeppelin-bench calibrate` (docs/QUALIFY.md, "Calibration"): measured times in, the hardware
// profile's constants out, in exactly the forms the cost model prices them (core/cost/cost_model.cpp), so
// that a calibrated profile reproduces the measurements it came from up to the residuals reported here.
//   kernel call:  t = F / (peak · η · r/(r + h)) + c   (attention: r = query rows; GEMM: r = rows m)
//                   = a·F + a·h·F/r + c  with a = 1/(peak·η): linear in (a, a·h, c)
//   transfer:     t = L + bytes / B                      linear in (L, 1/B)
// Both are weighted least squares: Σ t·r² over the points, r = predicted/measured − 1, i.e. each point's
// relative error weighted by its time. A run's time is a sum of calls, so the long calls that dominate it
// weigh most, while the short ones still pin the overhead (a plain relative fit lets a hundred 50 µs calls
// outvote the 50 ms one a layer waits for; an absolute one ignores them). Coefficients are kept
// non-negative by trying each subset of the optional ones and keeping the best fit that is feasible.
#include <string>
#include <vector>

namespace zb::qualify {

struct KernelPoint {
  double flops = 0;    // FLOPs of the call
  double rows = 0;     // its query rows (attention) or GEMM rows m
  double seconds = 0;  // measured time of one call
};

struct TransferPoint {
  double bytes = 0;
  double seconds = 0;  // one message, first byte sent to last byte received
};

// residual = predicted / measured − 1, per point in input order, with the point's measured time: the RMS
// says how far single calls are off, the time-weighted RMS (the quantity the fits minimise, normalised)
// how far a sum of such calls is.
struct FitResiduals {
  std::vector<double> residuals;
  std::vector<double> seconds;
  [[nodiscard]] double rms_residual() const;
  [[nodiscard]] double weighted_rms_residual() const;  // sqrt(Σ t·r² / Σ t)
  void add(double residual, double measured) { residuals.push_back(residual), seconds.push_back(measured); }
};

struct KernelFit : FitResiduals {
  double efficiency = 0;  // η, of `peak`; may exceed 1 when the peak given is below what was measured
  double half_rows = 0;   // h
  double overhead = 0;    // c, seconds per call
  [[nodiscard]] double predict(double flops, double rows, double peak) const;
};

struct LinkFit : FitResiduals {
  double bandwidth = 0;  // bytes/s
  double latency = 0;    // seconds per message
};

// Needs at least one point with positive FLOPs, rows and time; throws zb::Error (runtime) otherwise.
[[nodiscard]] KernelFit fit_kernel(const std::vector<KernelPoint>& points, double peak_flops);
// The backward/forward FLOP factor κ that makes `fit` (the forward's curve) price the backward calls:
// t_bwd ≈ κ·F·(r + h)/(r·peak·η) + c, κ by the same relative least squares. Residuals of the backward points.
struct FactorFit : FitResiduals {
  double factor = 0;
};
[[nodiscard]] FactorFit fit_backward_factor(const std::vector<KernelPoint>& backward,
                                            const KernelFit& forward, double peak_flops);
// Needs at least two distinct sizes.
[[nodiscard]] LinkFit fit_link(const std::vector<TransferPoint>& points);

}  // namespace zb::qualify
