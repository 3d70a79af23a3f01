#pragma once
// Measured NIC loads of a cuda run, the parts that need no GPU: which counters a node's first rank
// samples, and how the sampled loads land on the trace axis. The executor (node_nic_sampling.hpp) runs
// one extra layer after the timed ones with a NicSampler (core/exec/nic) over these counters and gathers
// the loads into trace.links, marked measured, so the report's NIC panels show them.
//
// Which NICs: ZB_NICS names them, in the cluster's NIC order; otherwise the node's InfiniBand device
// closest to each rail's first GPU on the PCI tree (nic_topology.hpp). A node whose InfiniBand devices
// are missing or do not fit the cluster's NIC layout samples nothing and says why in one note: the
// timed figures do not depend on the counters, so that is never a reason to fail the run (the note names
// no node, so that nodes alike are said once in the trace's note). A NIC that
// ZB_NICS names but this host lacks is a typo, and bad input as for the reference backend.
#include <filesystem>
#include <string>
#include <vector>

#include "core/exec/nic/nic_counters.hpp"
#include "core/exec/trace.hpp"

namespace zb::cuda {

struct NodeNics {
  std::vector<nic::NicCounters> counters;  // in the cluster's NIC order; empty: nothing to sample
  std::string note;                        // why nothing is sampled; empty when counters are found
};

// `named`: ZB_NICS's list (empty: map by topology); `gpu_bus_ids`: the node's GPUs in local order
// (cudaDeviceGetPCIBusId). Exit 2 only for a named NIC without counters.
[[nodiscard]] NodeNics node_nics(const std::vector<std::string>& named,
                                 const std::vector<std::string>& gpu_bus_ids, int nics_per_node,
                                 const std::filesystem::path& sysfs = "/sys");

// The loads with every series point `shift` seconds earlier, so that the sampled layer's forward pass
// starts at 0 on the trace axis. What the counters saw before it (the barrier) is cut from the series at
// 0 but stays in `bytes` (a few bytes of the barrier's all-reduce); the backward pass keeps its own
// place in the sampled layer, which differs from the median forward time by the two layers' spread.
[[nodiscard]] std::vector<LinkLoad> shifted_loads(std::vector<LinkLoad> loads, double shift);

}  // namespace zb::cuda
