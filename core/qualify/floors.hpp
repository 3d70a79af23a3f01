#pragma once
// The floors a qualification checks its figures against. Two kinds, both optional in a floors file:
//   * relative (always on): a figure below `relative` × the median of its class fails, the class being
//     the figures of one probe at one shape (every rail at 16 MiB, every GPU's GEMM at 512³), so the one
//     slow link or GPU among its peers is named whatever the hardware. A routed transfer is held to the
//     median of the direct rails at its size: routing over every NIC must not lose to one NIC by more;
//   * absolute: a minimum per probe ("p2p-rail": "20 Gbit/s") and a largest link latency, for hardware
//     whose nominal figures are known. The reference backend measures a CPU and emulated links, which have
//     no nominal value, so it relies on the relative floors unless a file says more.
//   * nominal: a fraction of the cluster's nominal figure per probe (nominal_floors.hpp), on by default
//     for the cuda backend; it applies only to figures whose shape can reach the nominal rate
//     (Measurement::reaches_nominal: a 1024³ GEMM cannot keep an H200 busy).
// A floors file is JSON (// comments allowed):
//   { "relative_to_median": 0.5, "gemm": "2 GFLOP/s", "p2p-rail": "100 MB/s", "max_latency": "500 us",
//     "nominal_fraction": 0.6 }       // or per probe: { "gemm": 0.6, "p2p-rail": 0.4 }; 0 turns one off
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/qualify/measurement.hpp"

namespace zb::qualify {

struct FloorSpec {
  double relative = 0.5;
  std::map<Probe, double> absolute;   // SI units: FLOP/s, bytes/s
  std::optional<double> max_latency;  // seconds
  std::string file;                   // the floors file, empty when none
  // The floors file's "nominal_fraction", per probe (empty when it has none: the backend's default).
  std::map<Probe, double> nominal_fraction;
  // Nominal floors in SI units and where each came from (apply_nominal_floors fills them).
  std::map<Probe, double> nominal;
  std::map<Probe, std::string> nominal_source;
};

// Exit 2 naming the file and the key for an unknown key, a quantity in the wrong unit, or a relative
// fraction outside (0, 1].
[[nodiscard]] FloorSpec read_floors_file(const std::filesystem::path& file);

// Every measurement with its floor (the largest of the relative, the file's and, for a figure that
// reaches_nominal, the nominal one) and verdict, in
// the measurements' order. A latency above max_latency fails its link whatever its bandwidth.
[[nodiscard]] std::vector<Verdict> evaluate(const std::vector<Measurement>& measurements,
                                            const FloorSpec& floors);

}  // namespace zb::qualify
