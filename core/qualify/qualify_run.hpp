#pragma once
// `zeppelin-bench qualify`: the suite of measurement.hpp run on the scenario's cluster, one process per
// GPU under mpirun or srun (on one machine: scripts/emulated-cluster.sh run), each figure checked
// against its floor (floors.hpp). Backend `reference`: the host's CPU kernels and the interfaces the
// ranks' transport uses. Without a launcher only this process's compute figures are measured, and the
// result says that no link was.
#include <functional>
#include <string>
#include <vector>

#include "core/config/scenario.hpp"
#include "core/qualify/compute_probes.hpp"
#include "core/qualify/floors.hpp"
#include "core/qualify/gpu_sweeps.hpp"
#include "core/qualify/link_probes.hpp"

namespace zb::qualify {

struct QualifyOptions {
  FloorSpec floors;
  ComputeShapes compute;  // reference backend
  LinkShapes links;
  GpuComputeSweep gpu_compute;  // cuda backend
  GpuLinkSweep gpu_links;
  // When given, hears one line per step on the reporting rank (reference backend): "qualify: compute
  // probes of rank 3 of 8 (node 0 GPU 3; 12 s so far, about 40 s to go)", then the links. The ranks probe
  // one at a time, and a silent command of minutes looks hung.
  std::function<void(const std::string&)> progress;
};

struct QualifyResult {
  std::string scenario;
  std::string backend = "reference";
  std::string launch;  // describe(process_launch())
  int world_size = 1;
  bool links_measured = false;
  std::vector<Verdict> verdicts;  // every figure, compute first, in probe order
  std::vector<std::string> notes;
  [[nodiscard]] int failures() const;
  bool is_reporter = true;  // rank 0 holds every rank's figures and reports; the others hold their own
};

// Compute figures first (probe, then shape, then node and GPU), links after in the order they ran: the
// order of every backend's report.
void order_for_report(std::vector<Measurement>& all);

// Runs the suite. Exit 2 (zb::Error) when the launcher's world is not the scenario's GPU count (both
// named) or a multi-process launch meets a build without MPI; exit 3 when a probe fails at run time.
[[nodiscard]] QualifyResult run_qualify(const Scenario& scenario, const QualifyOptions& options);

}  // namespace zb::qualify
