#include "core/exec/cuda/nic_topology.hpp"

#include <algorithm>
#include <cctype>
#include <climits>

#include "core/common/error.hpp"

namespace zb::cuda {

namespace fs = std::filesystem;

namespace {

fs::path resolved(const fs::path& link, const std::string& what, const std::string& hint) {
  std::error_code ec;
  fs::path path = fs::canonical(link, ec);
  if (ec)
    throw Error(ExitCode::bad_input, Location{},
                what + ": " + link.string() + " does not resolve (" + ec.message() + ")", hint);
  return path;
}

// sysfs spells bus ids in lower case with a 4-digit domain; CUDA may give "00000000:1B:00.0".
std::string sysfs_bus_id(std::string id) {
  std::transform(id.begin(), id.end(), id.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const std::size_t colon = id.find(':');
  if (colon != std::string::npos && colon > 4) id.erase(0, colon - 4);
  return id;
}

std::vector<std::string> ib_devices(const fs::path& sysfs) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(sysfs / "class/infiniband", ec))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

fs::path gpu_pci_path(const std::string& bus_id, const fs::path& sysfs) {
  return resolved(
      sysfs / "bus/pci/devices" / sysfs_bus_id(bus_id), "GPU " + bus_id,
      "the GPU's PCI device is not in sysfs (a container without /sys/bus/pci?): name the NICs in ZB_NICS");
}

fs::path nic_pci_path(const std::string& ib_device, const fs::path& sysfs) {
  return resolved(sysfs / "class/infiniband" / ib_device / "device", "NIC " + ib_device,
                  "ls /sys/class/infiniband lists the devices; or name the NICs in ZB_NICS");
}

int pci_distance(const fs::path& a, const fs::path& b) {
  auto ia = a.begin(), ib = b.begin();
  while (ia != a.end() && ib != b.end() && *ia == *ib) ++ia, ++ib;
  return static_cast<int>(std::distance(ia, a.end()) + std::distance(ib, b.end()));
}

std::vector<std::string> rail_nics(const std::vector<std::string>& gpu_bus_ids, int nics_per_node,
                                   const fs::path& sysfs) {
  const std::vector<std::string> devices = ib_devices(sysfs);
  const std::string hint =
      "the cuda backend maps the cluster's NICs onto this node's InfiniBand devices by PCI distance; "
      "name them in rail order in ZB_NICS (e.g. ZB_NICS=mlx5_0,mlx5_1,…) instead";
  if (nics_per_node <= 0 || gpu_bus_ids.empty()) return {};
  if (static_cast<int>(devices.size()) < nics_per_node)
    throw Error(ExitCode::bad_input, Location{},
                "the cluster has " + std::to_string(nics_per_node) + " NICs per node but " +
                    (sysfs / "class/infiniband").string() + " lists " + std::to_string(devices.size()) +
                    " InfiniBand devices",
                hint);
  std::vector<fs::path> nic_paths;
  for (const std::string& d : devices) nic_paths.push_back(nic_pci_path(d, sysfs));
  const auto gpus = static_cast<int>(gpu_bus_ids.size());
  std::vector<std::string> rails;
  for (int i = 0; i < nics_per_node; ++i) {
    const int gpu = std::min(gpus - 1, i * gpus / nics_per_node);
    const fs::path gpu_path = gpu_pci_path(gpu_bus_ids[static_cast<std::size_t>(gpu)], sysfs);
    std::size_t best = 0;
    int best_distance = INT_MAX;
    for (std::size_t d = 0; d < devices.size(); ++d) {
      const int distance = pci_distance(gpu_path, nic_paths[d]);
      if (distance < best_distance) best = d, best_distance = distance;  // strict: ties keep the lower name
    }
    if (std::find(rails.begin(), rails.end(), devices[best]) != rails.end())
      throw Error(ExitCode::bad_input, Location{},
                  "NIC " + std::to_string(i) + " of the cluster (closest to GPU " +
                      gpu_bus_ids[static_cast<std::size_t>(gpu)] + ") is " + devices[best] +
                      ", which an earlier rail already has",
                  hint);
    rails.push_back(devices[best]);
  }
  return rails;
}

}  // namespace zb::cuda
