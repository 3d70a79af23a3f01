#pragma once
// Absolute floors from the hardware's nominal figures: a fraction of what the scenario's cluster (its
// preset, or the figures the scenario gives) says a GPU or a link can do. The cuda backend checks them
// by default (a healthy H200 reaches well over these fractions; a GPU with a fault, a link trained at a
// lower width or a NIC on the wrong PCIe switch does not); the reference backend measures a CPU and
// emulated links, whose nominal figures mean nothing, so it checks them only when a floors file asks
// ("nominal_fraction", floors.hpp).
//
// Nominal figure of each probe:
//   gemm, attention  cluster.gpu.peak_flops (dense bf16)
//   p2p-intra        cluster.nvlink.bandwidth (per GPU, per direction)
//   p2p-rail         cluster.nic.bandwidth, capped by cluster.pcie_bandwidth when given
//   all-rails        that, divided by the most GPUs of a node that share one NIC (gpu_to_nic)
//   routed           the p2p-rail figure: spread over every NIC, a transfer must still reach one NIC's
// Latency has no nominal floor: NCCL's own cost per call (microseconds) dwarfs the wire's latency that a
// preset gives, so only a floors file's max_latency bounds it.
#include <map>

#include "core/config/scenario.hpp"
#include "core/qualify/floors.hpp"

namespace zb::qualify {

// gemm 0.5, attention 0.35 (cuDNN's causal SDPA reaches about half of peak at 8k tokens and more),
// every link 0.5.
[[nodiscard]] std::map<Probe, double> default_nominal_fractions();

// The fractions a run checks: the cuda backend's defaults with the floors file's "nominal_fraction"
// over them; on the reference backend only the file's.
[[nodiscard]] std::map<Probe, double> nominal_fractions(const FloorSpec& floors, bool cuda_backend);

[[nodiscard]] double nominal_value(Probe probe, const ClusterSpec& cluster);

// Sets floors.nominal[probe] = fraction × nominal_value for every probe of `fractions` with a positive
// fraction, and floors.nominal_source to say so ("0.5 × nominal 989 TFLOP/s (dgx-h200, H200)").
void apply_nominal_floors(FloorSpec& floors, const ClusterSpec& cluster,
                          const std::map<Probe, double>& fractions);

}  // namespace zb::qualify
