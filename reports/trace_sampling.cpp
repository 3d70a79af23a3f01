#include "reports/trace_sampling.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>

#include <fmt/format.h>

#include "reports/trace_tracks.hpp"

namespace zb::reports {
namespace {

// The node whose rank ends last: where the layer's critical path ends (lowest node on a tie).
int straggler_node(const Trace& trace) {
  int rank = 0;
  double end = -1;
  for (const TraceEvent& e : trace.events) {
    if (e.end > end || (e.end == end && e.rank < rank)) {
      end = e.end;
      rank = e.rank;
    }
  }
  return node_of_rank(trace, rank);
}

// 0, n/2, n/4, 3n/4, ...: each node's index with its bits reversed, so the first k nodes of the order
// are spread over the cluster for every k.
std::vector<int> spread_order(int nodes) {
  const int bits = std::bit_width(static_cast<unsigned>(std::max(nodes - 1, 0)));
  const auto reversed = [bits](int i) {
    unsigned r = 0;
    for (int b = 0; b < bits; ++b) r |= ((static_cast<unsigned>(i) >> b) & 1u) << (bits - 1 - b);
    return r;
  };
  std::vector<int> order(static_cast<std::size_t>(nodes));
  for (int i = 0; i < nodes; ++i) order[static_cast<std::size_t>(i)] = i;
  std::sort(order.begin(), order.end(), [&](int a, int b) { return reversed(a) < reversed(b); });
  return order;
}

}  // namespace

std::string TraceSample::statement(const Trace& trace) const {
  if (everything()) return "";
  int ranks = 0;
  std::string listed;
  for (const int node : nodes) {
    const int first = node * std::max(trace.gpus_per_node, 1);
    ranks += std::min(trace.world_size, first + std::max(trace.gpus_per_node, 1)) - first;
    listed += (listed.empty() ? "" : ", ") + std::to_string(node);
  }
  return fmt::format("nodes {} of {}: {} of {} ranks, {} of {} slices (larger traces show whole nodes)",
                     listed, total_nodes, ranks, trace.world_size, slices, total_slices);
}

TraceSample sample_nodes(const Trace& trace, std::size_t max_slices) {
  TraceSample sample;
  sample.total_nodes = node_count(trace);
  std::vector<std::size_t> per_node(static_cast<std::size_t>(sample.total_nodes), 0);
  const auto count = [&](int rank) {
    const int node = std::clamp(node_of_rank(trace, rank), 0, sample.total_nodes - 1);
    ++per_node[static_cast<std::size_t>(node)];
  };
  for (const TraceEvent& e : trace.events) count(e.rank);
  for (const DeviceActivity& a : trace.device_activity) count(a.rank);
  for (const std::size_t n : per_node) sample.total_slices += n;

  std::vector<bool> shown(per_node.size(), false);
  const auto show = [&](int node) {
    shown[static_cast<std::size_t>(node)] = true;
    sample.slices += per_node[static_cast<std::size_t>(node)];
  };
  if (sample.total_slices <= max_slices) {
    for (int node = 0; node < sample.total_nodes; ++node) show(node);
  } else {
    show(0);
    std::vector<int> candidates{straggler_node(trace)};
    for (const int node : spread_order(sample.total_nodes)) candidates.push_back(node);
    for (const int node : candidates) {
      const auto n = static_cast<std::size_t>(node);
      if (!shown[n] && sample.slices + per_node[n] <= max_slices) show(node);
    }
  }
  for (int node = 0; node < sample.total_nodes; ++node) {
    if (shown[static_cast<std::size_t>(node)]) sample.nodes.push_back(node);
  }
  return sample;
}

Trace restricted_to(const Trace& trace, const TraceSample& sample) {
  const auto shown = [&](int node) {
    return std::binary_search(sample.nodes.begin(), sample.nodes.end(), node);
  };
  Trace out = trace;
  std::erase_if(out.events, [&](const TraceEvent& e) { return !shown(node_of_rank(trace, e.rank)); });
  std::erase_if(out.device_activity,
                [&](const DeviceActivity& a) { return !shown(node_of_rank(trace, a.rank)); });
  // NICs of hidden nodes have no counters; NVLink and the core are not drawn (reports/trace_counters.hpp).
  std::erase_if(out.links, [&](const LinkLoad& l) {
    return (l.kind == LinkKind::nic_tx || l.kind == LinkKind::nic_rx) && !shown(std::max(l.node, 0));
  });
  return out;
}

}  // namespace zb::reports
