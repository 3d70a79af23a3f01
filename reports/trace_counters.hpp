#pragma once
// NIC throughput counters of the Perfetto trace: one counter track per NIC and direction of every node,
// named after the link ("n1-nic3-tx", no spaces: Perfetto names a JSON counter track "<name> <arg key>",
// so it shows as "n1-nic3-tx Gbit/s"), with one series {"Gbit/s": rate} in the node's process. Gbit/s
// because NICs are specified in it (a 400 Gbit/s port), so a saturated link reads as its nominal rate.
//
// A NIC that carries nothing still gets its track, at 0 from the start to the end of the trace: every
// NIC of the cluster shows, and an idle one is visibly idle instead of missing. The cluster's NICs are
// nodes x nics_per_node; a NIC link of the trace outside that range (a backend that does not set
// nics_per_node) gets its track too.
#include <nlohmann/json.hpp>

#include "core/exec/trace.hpp"

namespace zb::reports {

void add_nic_counters(const Trace& trace, nlohmann::ordered_json& events);

}  // namespace zb::reports
