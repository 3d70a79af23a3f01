#include "core/exec/cuda/node_nics.hpp"

#include <system_error>

#include "core/common/error.hpp"
#include "core/exec/cuda/nic_topology.hpp"

namespace zb::cuda {

namespace fs = std::filesystem;

NodeNics node_nics(const std::vector<std::string>& named, const std::vector<std::string>& gpu_bus_ids,
                   int nics_per_node, const fs::path& sysfs) {
  NodeNics chosen;
  if (!named.empty()) {
    chosen.counters = nic::resolve_nics(named, sysfs);
    return chosen;
  }
  const std::string prefix = "no measured NIC loads: ";
  std::error_code ec;
  if (fs::is_empty(sysfs / "class/infiniband", ec) || ec) {
    chosen.note = prefix + "no InfiniBand device under " + (sysfs / "class/infiniband").string() +
                  " (name the NICs to sample in ZB_NICS)";
    return chosen;
  }
  try {
    chosen.counters = nic::resolve_nics(rail_nics(gpu_bus_ids, nics_per_node, sysfs), sysfs);
  } catch (const Error& e) {
    const std::string what = e.problems().empty() ? e.what() : e.problems().front().what;
    chosen.note = prefix + what + " (name the NICs to sample, in rail order, in ZB_NICS)";
  }
  return chosen;
}

std::vector<LinkLoad> shifted_loads(std::vector<LinkLoad> loads, double shift) {
  for (LinkLoad& load : loads) {
    std::vector<LoadPoint> series;
    for (const LoadPoint& p : load.series) {
      const double t = p.t - shift;
      if (t <= 0) {
        series.assign(1, {0.0, p.bytes_per_second});  // the rate in force at 0, so far
        continue;
      }
      series.push_back({t, p.bytes_per_second});
    }
    load.series = std::move(series);
  }
  return loads;
}

}  // namespace zb::cuda
