#include "core/exec/sim/platform.hpp"

#include <vector>

#include "core/common/error.hpp"

namespace zb::sim {

namespace {
// Appended rather than "n" + to_string(node): GCC 12 reports a bogus -Wrestrict on the latter.
std::string node_prefix(int node) {
  std::string prefix = "n";
  prefix += std::to_string(node);
  return prefix;
}
}  // namespace

Platform::Platform(const ClusterSpec& cluster, const HardwareProfile& profile)
    : cluster_(cluster), profile_(profile), world_size_(cluster.world_size()) {
  if (static_cast<int>(cluster.gpu_to_nic.size()) != cluster.gpus_per_node) {
    throw Error(ExitCode::bad_input, Location{}, "cluster.gpu_to_nic must list one NIC per local GPU");
  }
  const auto n = static_cast<std::size_t>(world_size_);
  nvlink_out_.assign(n, -1);
  nvlink_in_.assign(n, -1);
  pcie_up_.assign(n, -1);
  pcie_down_.assign(n, -1);
  // Platform order (the order of Trace::links): per node, its GPUs' links, then its NICs; the core last.
  for (int node = 0; node < cluster.nodes; ++node) {
    const std::string prefix = node_prefix(node);
    for (int local = 0; local < cluster.gpus_per_node; ++local) {
      const auto rank = static_cast<std::size_t>(node * cluster.gpus_per_node + local);
      const std::string gpu = prefix + "-gpu" + std::to_string(local);
      nvlink_out_[rank] = add_link(gpu + "-nvl-out", LinkKind::nvlink_out, node, local,
                                   cluster.nvlink.bandwidth, cluster.nvlink.latency);
      nvlink_in_[rank] =
          add_link(gpu + "-nvl-in", LinkKind::nvlink_in, node, local, cluster.nvlink.bandwidth, 0.0);
      if (cluster.pcie_bandwidth) {
        pcie_up_[rank] =
            add_link(gpu + "-pcie-up", LinkKind::pcie, node, local, *cluster.pcie_bandwidth, 0.0);
        pcie_down_[rank] =
            add_link(gpu + "-pcie-down", LinkKind::pcie, node, local, *cluster.pcie_bandwidth, 0.0);
      }
    }
    for (int nic = 0; nic < cluster.nics_per_node; ++nic) {
      const std::string name = prefix + "-nic" + std::to_string(nic);
      nic_tx_.push_back(
          add_link(name + "-tx", LinkKind::nic_tx, node, nic, cluster.nic.bandwidth, cluster.nic.latency));
      nic_rx_.push_back(add_link(name + "-rx", LinkKind::nic_rx, node, nic, cluster.nic.bandwidth, 0.0));
    }
  }
  if (cluster.pcie_bandwidth) {
    std::vector<int> gpus_on_nic(static_cast<std::size_t>(cluster.nics_per_node), 0);
    for (int nic : cluster.gpu_to_nic) {
      if (nic >= 0 && nic < cluster.nics_per_node) ++gpus_on_nic[static_cast<std::size_t>(nic)];
    }
    pcie_never_binds_ = *cluster.pcie_bandwidth >= cluster.nic.bandwidth;
    for (int nic : cluster.gpu_to_nic) {
      if (nic < 0 || nic >= cluster.nics_per_node || gpus_on_nic[static_cast<std::size_t>(nic)] != 1)
        pcie_never_binds_ = false;
    }
  }
  if (cluster.nodes > 1 && cluster.oversubscription > 1.0) {
    const double capacity =
        cluster.nodes * cluster.nics_per_node * cluster.nic.bandwidth / cluster.oversubscription;
    core_ = add_link("core", LinkKind::core, -1, -1, capacity, 0.0);
  }
}

int Platform::add_link(std::string name, LinkKind kind, int node, int index, double nominal, double latency) {
  PlatformLink link;
  link.name = std::move(name);
  link.kind = kind;
  link.node = node;
  link.index = index;
  link.nominal_bandwidth = nominal;
  const bool nvlink = kind == LinkKind::nvlink_out || kind == LinkKind::nvlink_in;
  link.bandwidth = nominal * (nvlink ? profile_.nvlink_efficiency() : profile_.nic_efficiency());
  link.latency = latency;
  links_.push_back(std::move(link));
  return static_cast<int>(links_.size()) - 1;
}

std::vector<int> Platform::route(int src, int dst) const {
  std::vector<int> path;
  if (src == dst) return path;
  const auto s = static_cast<std::size_t>(src);
  const auto d = static_cast<std::size_t>(dst);
  if (cluster_.node_of(src) == cluster_.node_of(dst)) {
    path = {nvlink_out_[s], nvlink_in_[d]};
    return path;
  }
  if (pcie_up_[s] >= 0) path.push_back(pcie_up_[s]);
  path.push_back(nic_tx_[static_cast<std::size_t>(cluster_.global_nic_of(src))]);
  if (core_ >= 0) path.push_back(core_);
  path.push_back(nic_rx_[static_cast<std::size_t>(cluster_.global_nic_of(dst))]);
  if (pcie_down_[d] >= 0) path.push_back(pcie_down_[d]);
  return path;
}

std::vector<int> Platform::solver_route(int src, int dst) const {
  std::vector<int> path = route(src, dst);
  if (!pcie_never_binds_) return path;
  std::erase_if(path, [this](int l) { return links_[static_cast<std::size_t>(l)].kind == LinkKind::pcie; });
  return path;
}

double Platform::issue_overhead(int src, int dst) const {
  return inter_node(src, dst) ? profile_.nic_transfer_overhead : profile_.nvlink_transfer_overhead;
}

double Platform::route_latency(int src, int dst) const {
  double latency = 0;
  for (int link : route(src, dst)) latency += links_[static_cast<std::size_t>(link)].latency;
  return latency;
}

std::string Platform::host_name(int rank) const {
  return node_prefix(cluster_.node_of(rank)) + "-gpu" + std::to_string(cluster_.local_of(rank));
}

}  // namespace zb::sim
