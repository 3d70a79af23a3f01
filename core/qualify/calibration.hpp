#pragma once
// `zeppelin-bench calibrate` (docs/QUALIFY.md, "Calibration"): measures the kernels and links a run of the
// scenario uses, the way the run uses them, and fits the hardware profile's constants to the times
// (profile_fit.hpp). Backend `reference`: the CPU kernels at the scenario model's own dimensions (what
// `ZB_REF_DIMS=model` runs), all ranks of the launch at once (so ranks that share a host's cores measure
// the sharing a run sees), and single messages over the reference transport between the first pair of
// GPUs inside a node (NVLink class) and the first pair across nodes (NIC class).
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/hardware_profile.hpp"
#include "core/config/scenario.hpp"
#include "core/qualify/gpu_sweeps.hpp"
#include "core/qualify/profile_fit.hpp"

namespace zb::qualify {

struct CalibrationShapes {
  std::vector<int> attention_tokens{64, 128, 256, 512, 1024};  // one causal sequence per call
  std::vector<int> gemm_rows{16, 64, 256, 1024};               // m, at each of the layer's four GEMM shapes
  std::vector<std::int64_t> transfer_bytes{64 << 10, 512 << 10, 4 << 20};
  int repetitions = 5;  // per shape; the median is the figure (a run sees typical times, not the best)
  // > 0: cut the shapes to about this many seconds of kernel measuring after a quick probe
  // (calibration_budget.hpp); 0 measures every shape.
  double budget_seconds = 0;
  std::chrono::milliseconds timeout{30000};
};

// Every rank's median times (rank 0 holds all of them after the run; the others their own).
struct CalibrationSamples {
  std::vector<KernelPoint> attention_forward;
  std::vector<KernelPoint> attention_backward;
  std::vector<KernelPoint> gemm;
  std::vector<TransferPoint> nvlink;  // one-way time of one message, GPU 0 ↔ GPU 1 of node 0
  std::vector<TransferPoint> nic;     // the same, node 0 GPU 0 ↔ node 1 GPU 0
  std::string launch;
  std::string backend = "reference";
  std::string device;  // the GPU's name on the cuda backend
  int ranks = 1;
  bool is_reporter = true;
};

// Runs the measurements (every rank of the launch calls it; without a launcher, this process alone and no
// link). Exit 2 when the launch's world is not the scenario's GPU count.
// `progress`, when given, hears one line per step on the reporting rank ("calibrate: attention 3 of 5 ..."):
// on CPU kernels a large model's shapes take minutes each, and a silent command looks hung.
[[nodiscard]] CalibrationSamples measure_for_calibration(
    const Scenario& scenario, const CalibrationShapes& shapes,
    const std::function<void(const std::string&)>& progress = {});

struct Calibration {
  HardwareProfile profile;  // the scenario's profile with every fitted constant replaced
  KernelFit attention;
  FactorFit attention_backward;
  KernelFit gemm;
  std::optional<LinkFit> nvlink, nic;
  std::vector<std::string> notes;  // constants left as they were and why, clamped values
};

// The fits and the profile they give (peak and link figures from the scenario's cluster).
[[nodiscard]] Calibration fit_calibration(const CalibrationSamples& samples, const Scenario& scenario);

// The fit report: every point with its residual, each fit's constants and RMS residual, the notes.
[[nodiscard]] nlohmann::ordered_json calibration_json(const CalibrationSamples& samples,
                                                      const Calibration& calibration,
                                                      const Scenario& scenario);

}  // namespace zb::qualify
