#pragma once
// NIC throughput counters of the Perfetto trace: one counter track per NIC and direction of every node,
// named after the link ("n1-nic3-tx", no spaces: Perfetto names a JSON counter track "<name> <arg key>",
// so it shows as "n1-nic3-tx Gbit/s"), with one series {"Gbit/s": rate}. Gbit/s because NICs are
// specified in it (a 400 Gbit/s port), so a saturated link reads as its nominal rate.
//
// A node's counters are a process of their own, "node N · NICs" (reports/trace_tracks.hpp), sorted after
// every node's ranks: both viewers draw a process's counters above its threads, so in the node's own
// process they would be the first screen. Every counter event carries that process's pid and one tid,
// `first_tid + node`, a tid no track uses: Perfetto keys counter tracks by process and name, and gives an
// event without a tid the tid of its pid, which may be another process's track.
//
// A NIC that carries nothing still gets its track, at 0 from the start to the end of the trace: every
// NIC of the cluster shows, and an idle one is visibly idle instead of missing. The cluster's NICs are
// nodes x nics_per_node; a NIC link of the trace outside that range (a backend that does not set
// nics_per_node) gets its track too.
#include <vector>

#include <nlohmann/json.hpp>

#include "core/exec/trace.hpp"

namespace zb::reports {

// The nodes that get a NIC process, ascending: every node of `shown` (the trace's nodes, or those a large
// trace shows: reports/trace_sampling.hpp) when the cluster has NICs, and the node of any NIC link of the
// trace.
[[nodiscard]] std::vector<int> nodes_with_nic_counters(const Trace& trace, const std::vector<int>& shown);

// The "C" events of those NICs' series; node N's on tid first_tid + N of nic_process_of_node(N).
void add_nic_counters(const Trace& trace, const std::vector<int>& shown, int first_tid,
                      nlohmann::ordered_json& events);

}  // namespace zb::reports
