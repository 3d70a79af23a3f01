// NVLink figures per GPU (docs/METRICS.md, "NVLink utilisation"): what the trace's nvlink_out and
// nvlink_in loads carried. The simulator gives every GPU both links (platform order: per node, its GPUs);
// an executor that records none (a measured backend) gives no figures rather than zeros.
#include <map>
#include <utility>

#include "core/metrics/metrics.hpp"

namespace zb {

std::vector<NvlinkMetrics> nvlink_metrics(const Trace& trace) {
  // The trace is one layer of each pass: bytes over its window are the iteration's utilisation (every
  // layer moves the same bytes), and L · bytes the iteration's bytes, as for NICs.
  const double window = trace.trace_seconds();
  std::map<std::pair<int, int>, NvlinkMetrics> by_gpu;  // (node, local GPU): node-major order
  for (const LinkLoad& l : trace.links) {
    const bool out = l.kind == LinkKind::nvlink_out;
    if (!out && l.kind != LinkKind::nvlink_in) continue;
    NvlinkMetrics& g = by_gpu[{l.node, l.index}];
    g.node = l.node;
    g.gpu = l.index;
    g.bandwidth = l.bandwidth;
    const double capacity = l.bandwidth * window;
    const double utilization = capacity > 0 ? l.bytes / capacity : 0.0;
    (out ? g.tx_bytes : g.rx_bytes) = l.bytes * trace.layers;
    (out ? g.tx_utilization : g.rx_utilization) = utilization;
  }
  std::vector<NvlinkMetrics> out;
  out.reserve(by_gpu.size());
  for (auto& [key, g] : by_gpu) out.push_back(g);
  return out;
}

}  // namespace zb
