#pragma once
// The floors a qualification checks its figures against. Two kinds, both optional in a floors file:
//   * relative (always on): a figure below `relative` × the median of its class fails, the class being
//     the figures of one probe at one shape (every rail at 16 MiB, every GPU's GEMM at 512³), so the one
//     slow link or GPU among its peers is named whatever the hardware. A routed transfer is held to the
//     median of the direct rails at its size: routing over every NIC must not lose to one NIC by more;
//   * absolute: a minimum per probe ("p2p-rail": "20 Gbit/s") and a largest link latency, for hardware
//     whose nominal figures are known. The reference backend measures a CPU and emulated links, which have
//     no nominal value, so it relies on the relative floors unless a file says more.
// A floors file is JSON (// comments allowed):
//   { "relative_to_median": 0.5, "gemm": "2 GFLOP/s", "p2p-rail": "100 MB/s", "max_latency": "500 us" }
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/qualify/measurement.hpp"

namespace zb::qualify {

struct FloorSpec {
  double relative = 0.5;
  std::map<Probe, double> absolute;  // SI units: FLOP/s, bytes/s
  std::optional<double> max_latency;  // seconds
  std::string file;                   // the floors file, empty when none
};

// Exit 2 naming the file and the key for an unknown key, a quantity in the wrong unit, or a relative
// fraction outside (0, 1].
[[nodiscard]] FloorSpec read_floors_file(const std::filesystem::path& file);

// Every measurement with its floor (the larger of the relative and the absolute one) and verdict, in
// the measurements' order. A latency above max_latency fails its link whatever its bandwidth.
[[nodiscard]] std::vector<Verdict> evaluate(const std::vector<Measurement>& measurements, const FloorSpec& floors);

}  // namespace zb::qualify
