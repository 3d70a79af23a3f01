// The fitting half of `calibrate`: the measured samples → the hardware profile's constants, each in the
// cost model's own form and relative to the scenario's nominal figures (GPU peak, link bandwidth and
// latency), and the report of every point's residual.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/qualify/calibration.hpp"

namespace zb::qualify {
namespace {

using ojson = nlohmann::ordered_json;

// An efficiency as the profile accepts it, (0, 1]: a measured rate above the nominal one is clamped,
// with a note, since it means the scenario's nominal figure is too low for this hardware.
double as_efficiency(double value, const std::string& what, std::vector<std::string>& notes) {
  if (value <= 1.0) return value;
  notes.push_back(
      fmt::format("{}: measured {:.3g}× the scenario's nominal figure, written as 1 (raise the nominal "
                  "figure in the scenario's cluster to keep the measured rate)",
                  what, value));
  return 1.0;
}

// A link class: efficiency against the nominal bandwidth, and the latency beyond the cluster's own.
void set_link(const LinkFit& fit, const LinkSpec& nominal, const std::string& what, double& efficiency,
              double& overhead, std::vector<std::string>& notes) {
  efficiency = as_efficiency(fit.bandwidth / nominal.bandwidth, what + " bandwidth", notes);
  overhead = std::max(0.0, fit.latency - nominal.latency);
}

ojson residual_rows(const std::vector<KernelPoint>& points, const std::vector<double>& residuals) {
  ojson rows = ojson::array();
  for (std::size_t i = 0; i < points.size() && i < residuals.size(); ++i)
    rows.push_back(ojson{{"flops", points[i].flops},
                         {"rows", points[i].rows},
                         {"seconds", points[i].seconds},
                         {"residual", residuals[i]}});
  return rows;
}

ojson kernel_json(const KernelFit& fit, const std::vector<KernelPoint>& points) {
  return ojson{{"efficiency", fit.efficiency},
               {"half_rows", fit.half_rows},
               {"call_overhead_seconds", fit.overhead},
               {"rms_residual", fit.rms_residual()},
               {"time_weighted_rms_residual", fit.weighted_rms_residual()},
               {"points", residual_rows(points, fit.residuals)}};
}

ojson link_json(const std::optional<LinkFit>& fit, const std::vector<TransferPoint>& points) {
  if (!fit) return ojson();
  ojson rows = ojson::array();
  for (std::size_t i = 0; i < points.size() && i < fit->residuals.size(); ++i)
    rows.push_back(
        ojson{{"bytes", points[i].bytes}, {"seconds", points[i].seconds}, {"residual", fit->residuals[i]}});
  return ojson{{"bandwidth_bytes_per_second", fit->bandwidth},
               {"latency_seconds", fit->latency},
               {"rms_residual", fit->rms_residual()},
               {"time_weighted_rms_residual", fit->weighted_rms_residual()},
               {"points", std::move(rows)}};
}

}  // namespace

Calibration fit_calibration(const CalibrationSamples& samples, const Scenario& scenario) {
  const ClusterSpec& cluster = scenario.cluster;
  const double peak = cluster.gpu.peak_flops;
  Calibration c;
  c.profile = scenario.hardware_profile.profile;
  HardwareProfile& p = c.profile;

  c.attention = fit_kernel(samples.attention_forward, peak);
  p.attention_efficiency = as_efficiency(c.attention.efficiency, "attention", c.notes);
  p.attention_half_tokens = c.attention.half_rows;
  p.attention_call_overhead = c.attention.overhead;
  KernelFit clamped = c.attention;
  clamped.efficiency = p.attention_efficiency;
  c.attention_backward = fit_backward_factor(samples.attention_backward, clamped, peak);
  p.backward_attention_factor = c.attention_backward.factor;

  c.gemm = fit_kernel(samples.gemm, peak);
  p.gemm_efficiency = as_efficiency(c.gemm.efficiency, "GEMM", c.notes);
  p.gemm_half_rows = c.gemm.half_rows;
  p.gemm_call_overhead = c.gemm.overhead;
  // The fits are this executor's own kernel rates, and the executor runs nothing but the Program's
  // kernels, so the profile charges them as measured. The default fraction is a whole framework's
  // training step (hardware_profile.cpp), not what this backend runs.
  p.sustained_compute_fraction = 1.0;
  c.notes.push_back(
      "sustained_compute_fraction set to 1: the kernels are priced at the rates measured here; "
      "to predict a training framework's whole step from them, set it to the default " +
      fmt::format("{:g}", HardwareProfile{}.sustained_compute_fraction) +
      " (docs/METRICS.md, \"MFU against published figures\")");
  c.notes.push_back("backward_linear_factor kept at " + fmt::format("{:g}", p.backward_linear_factor) +
                    ": it counts FLOPs (a data- and a weight-gradient GEMM per forward GEMM), which the GEMM "
                    "curve then prices");
  c.notes.push_back("comm_compute_slowdown kept at " + fmt::format("{:g}", p.comm_compute_slowdown) +
                    ": calibrate times kernels and links apart, never a kernel beside a transfer; "
                    "`zb_gpucheck interference` measures it on a GPU (docs/CUDA_BACKEND.md)");
  c.notes.push_back(
      "compute_jitter, straggler_probability and straggler_slowdown kept: one calibration run cannot tell "
      "a cluster's spread between GPUs and iterations; they are what-if settings (docs/SIMULATOR.md)");

  if (!samples.nvlink.empty()) {
    c.nvlink = fit_link(samples.nvlink);
    set_link(*c.nvlink, cluster.nvlink, "intra-node", p.nvlink_bandwidth_efficiency,
             p.nvlink_transfer_overhead, c.notes);
  } else {
    c.notes.push_back(cluster.gpus_per_node > 1
                          ? "intra-node links not measured (one process: run under mpirun)"
                          : "intra-node links not measured: one GPU per node");
  }
  if (!samples.nic.empty()) {
    c.nic = fit_link(samples.nic);
    set_link(*c.nic, cluster.nic, "inter-node", p.nic_bandwidth_efficiency, p.nic_transfer_overhead, c.notes);
  } else {
    c.notes.push_back(cluster.nodes > 1 ? "inter-node links not measured (one process: run under mpirun)"
                                        : "inter-node links not measured: one node");
  }
  return c;
}

ojson calibration_json(const CalibrationSamples& samples, const Calibration& calibration,
                       const Scenario& scenario) {
  ojson backward_rows = residual_rows(samples.attention_backward, calibration.attention_backward.residuals);
  return ojson{
      {"schema", "zeppelin-bench/calibration/1"},
      {"scenario", scenario.name},
      {"backend", samples.backend},
      {"device",
       samples.device.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(samples.device)},
      {"launch", samples.launch},
      {"ranks", samples.ranks},
      {"nominal", ojson{{"peak_flops", scenario.cluster.gpu.peak_flops},
                        {"nvlink_bandwidth", scenario.cluster.nvlink.bandwidth},
                        {"nvlink_latency_seconds", scenario.cluster.nvlink.latency},
                        {"nic_bandwidth", scenario.cluster.nic.bandwidth},
                        {"nic_latency_seconds", scenario.cluster.nic.latency}}},
      {"fits",
       ojson{{"attention", kernel_json(calibration.attention, samples.attention_forward)},
             {"attention_backward",
              ojson{{"factor", calibration.attention_backward.factor},
                    {"rms_residual", calibration.attention_backward.rms_residual()},
                    {"time_weighted_rms_residual", calibration.attention_backward.weighted_rms_residual()},
                    {"points", std::move(backward_rows)}}},
             {"gemm", kernel_json(calibration.gemm, samples.gemm)},
             {"nvlink", link_json(calibration.nvlink, samples.nvlink)},
             {"nic", link_json(calibration.nic, samples.nic)}}},
      {"profile", ojson::parse(calibration.profile.to_json().dump())},
      {"notes", calibration.notes}};
}

}  // namespace zb::qualify
