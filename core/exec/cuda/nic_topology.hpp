#pragma once
// Which InfiniBand NIC of a node is the cluster model's NIC i, from the PCI topology: a cuda run samples
// the node's NIC byte counters (core/exec/nic) and must put each NIC's bytes on the NIC index the plan's
// routing uses. The cost model gives GPU g of a node the NIC g · nics_per_node / gpus_per_node (a rail);
// on the machine, the NIC that serves a GPU is the one closest to it on the PCI tree (the one under the
// same PCIe switch on a DGX/HGX board). Both ends are sysfs paths:
//   a GPU       /sys/bus/pci/devices/<bus id>          (cudaDeviceGetPCIBusId, lower-cased)
//   a NIC       /sys/class/infiniband/<dev>/device      (a link into /sys/devices/pci…/<bus id>)
// and their distance is the number of hops through their deepest common PCI ancestor. Pure C++ over a
// sysfs tree (tested against a fake one); the executor asks CUDA for the bus ids.
#include <filesystem>
#include <string>
#include <vector>

namespace zb::cuda {

// The resolved /sys/devices/... path of a PCI device given by bus id ("0000:1B:00.0"; any case), or of an
// InfiniBand device ("mlx5_0"). Exit 2 naming the path when it does not exist.
[[nodiscard]] std::filesystem::path gpu_pci_path(const std::string& bus_id,
                                                 const std::filesystem::path& sysfs = "/sys");
[[nodiscard]] std::filesystem::path nic_pci_path(const std::string& ib_device,
                                                 const std::filesystem::path& sysfs = "/sys");

// Hops between two devices through their deepest common ancestor on the PCI tree.
[[nodiscard]] int pci_distance(const std::filesystem::path& a, const std::filesystem::path& b);

// The InfiniBand devices of the node, as nic_counters names them ("mlx5_0", …), for NIC indices
// 0 … nics_per_node − 1: NIC i is the device closest to the first GPU of rail i (GPU i · gpus /
// nics_per_node of `gpu_bus_ids`, the node's GPUs in local order), ties to the lower device name.
// Exit 2 when the node has fewer InfiniBand devices than nics_per_node or two rails meet at one device
// (the machine does not have the cluster's NIC layout: name the NICs in ZB_NICS instead).
[[nodiscard]] std::vector<std::string> rail_nics(const std::vector<std::string>& gpu_bus_ids,
                                                 int nics_per_node,
                                                 const std::filesystem::path& sysfs = "/sys");

}  // namespace zb::cuda
