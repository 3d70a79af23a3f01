#include "core/qualify/nominal_floors.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "core/config/units.hpp"

namespace zb::qualify {
namespace {

// The most local GPUs that share one NIC (1 on a DGX: one NIC per GPU).
int most_gpus_per_nic(const ClusterSpec& cluster) {
  int most = 1;
  for (const int nic : cluster.gpu_to_nic)
    most = std::max(most,
                    static_cast<int>(std::count(cluster.gpu_to_nic.begin(), cluster.gpu_to_nic.end(), nic)));
  return most;
}

std::string nominal_text(Probe probe, double value) {
  return probe == Probe::gemm || probe == Probe::attention ? format_flops(value) : format_bandwidth(value);
}

}  // namespace

std::map<Probe, double> default_nominal_fractions() {
  return {{Probe::gemm, 0.5},     {Probe::attention, 0.35}, {Probe::p2p_intra, 0.5},
          {Probe::p2p_rail, 0.5}, {Probe::all_rails, 0.5},  {Probe::routed, 0.5}};
}

std::map<Probe, double> nominal_fractions(const FloorSpec& floors, bool cuda_backend) {
  std::map<Probe, double> fractions = cuda_backend ? default_nominal_fractions() : std::map<Probe, double>{};
  for (const auto& [probe, fraction] : floors.nominal_fraction) fractions[probe] = fraction;
  return fractions;
}

double nominal_value(Probe probe, const ClusterSpec& cluster) {
  const double rail = cluster.pcie_bandwidth ? std::min(cluster.nic.bandwidth, *cluster.pcie_bandwidth)
                                             : cluster.nic.bandwidth;
  switch (probe) {
    case Probe::gemm:
    case Probe::attention:
      return cluster.gpu.peak_flops;
    case Probe::p2p_intra:
      return cluster.nvlink.bandwidth;
    case Probe::p2p_rail:
    case Probe::routed:
      return rail;
    case Probe::all_rails:
      return rail / most_gpus_per_nic(cluster);
  }
  return 0;
}

void apply_nominal_floors(FloorSpec& floors, const ClusterSpec& cluster,
                          const std::map<Probe, double>& fractions) {
  const std::string hardware =
      cluster.preset.empty() ? cluster.gpu.name : cluster.preset + ", " + cluster.gpu.name;
  for (const auto& [probe, fraction] : fractions) {
    const double nominal = nominal_value(probe, cluster);
    if (fraction <= 0 || nominal <= 0) continue;
    floors.nominal[probe] = fraction * nominal;
    floors.nominal_source[probe] = fmt::format("{} × nominal {} ({})", fraction, nominal_text(probe, nominal),
                                               hardware.empty() ? "the scenario's cluster" : hardware);
  }
}

}  // namespace zb::qualify
