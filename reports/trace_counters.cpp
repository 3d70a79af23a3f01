#include "reports/trace_counters.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "reports/trace_tracks.hpp"

namespace zb::reports {
namespace {

constexpr double gigabits_per_byte = 8e-9;

// (node, NIC index, rx?): the order counter tracks are written in.
using NicKey = std::tuple<int, int, bool>;

// The counter's (pid, tid), the same on every event of one node's counters.
struct CounterTrack {
  int pid = 0;
  int tid = 0;
};

nlohmann::ordered_json counter_event(const std::string& name, CounterTrack track, std::int64_t ts_ns,
                                     double bytes_per_second) {
  return nlohmann::ordered_json{{"name", name},
                                {"cat", "nic"},
                                {"ph", "C"},
                                {"ts", trace_microseconds(ts_ns)},
                                {"pid", track.pid},
                                {"tid", track.tid},
                                {"args", {{"Gbit/s", bytes_per_second * gigabits_per_byte}}}};
}

// The link's piecewise-constant series on whole nanoseconds: a 0 at the trace's start when the series
// begins later (or is empty), a 0 at the trace's end when it stops earlier; of points that round to
// the same nanosecond the last holds, as it did before rounding.
void add_series(const std::string& name, CounterTrack track, const LinkLoad* link, std::int64_t end_ns,
                nlohmann::ordered_json& events) {
  std::vector<std::pair<std::int64_t, double>> points;
  if (link != nullptr) {
    for (const LoadPoint& point : link->series) {
      const std::int64_t t = trace_nanoseconds(point.t);
      if (!points.empty() && points.back().first == t)
        points.back().second = point.bytes_per_second;
      else
        points.emplace_back(t, point.bytes_per_second);
    }
  }
  if (points.empty() || points.front().first > 0) points.insert(points.begin(), {0, 0.0});
  if (points.back().first < end_ns) points.emplace_back(end_ns, 0.0);
  for (const auto& [t, rate] : points) events.push_back(counter_event(name, track, t, rate));
}

// Every NIC of the shown nodes, idle ones with no link, and every NIC link of the trace.
std::map<NicKey, const LinkLoad*> nics_of(const Trace& trace, const std::vector<int>& shown) {
  std::map<NicKey, const LinkLoad*> nics;
  for (const int node : shown) {
    for (int nic = 0; nic < trace.nics_per_node; ++nic) {
      nics[{node, nic, false}] = nullptr;
      nics[{node, nic, true}] = nullptr;
    }
  }
  for (const LinkLoad& link : trace.links) {
    if (link.kind != LinkKind::nic_tx && link.kind != LinkKind::nic_rx) continue;
    nics[{std::max(link.node, 0), link.index, link.kind == LinkKind::nic_rx}] = &link;
  }
  return nics;
}

}  // namespace

std::vector<int> nodes_with_nic_counters(const Trace& trace, const std::vector<int>& shown) {
  std::vector<int> nodes;
  for (const auto& [key, link] : nics_of(trace, shown)) {
    const int node = std::get<0>(key);
    if (nodes.empty() || nodes.back() != node) nodes.push_back(node);  // the map is in node order
  }
  return nodes;
}

void add_nic_counters(const Trace& trace, const std::vector<int>& shown, int first_tid,
                      nlohmann::ordered_json& events) {
  const std::int64_t end_ns = trace_nanoseconds(trace.trace_seconds());
  for (const auto& [key, link] : nics_of(trace, shown)) {
    const auto [node, nic, rx] = key;
    add_series(fmt::format("n{}-nic{}-{}", node, nic, rx ? "rx" : "tx"),
               CounterTrack{nic_process_of_node(trace, node), first_tid + node}, link, end_ns, events);
  }
}

}  // namespace zb::reports
