#include "reports/trace_tracks.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

namespace zb::reports {
namespace {

constexpr double nanoseconds_per_second = 1e9;
constexpr double nanoseconds_per_microsecond = 1e3;

const char* kind_title(TrackKind kind) {
  switch (kind) {
    case TrackKind::compute:
      return "compute";
    case TrackKind::send:
      return "send";
    case TrackKind::recv:
      return "recv";
    case TrackKind::collective:
      return "collective";
    case TrackKind::relay:
      return "relay";
    case TrackKind::device:
      return "cuda stream";
  }
  return "?";
}

// (rank, kind, lane): the order tracks get their tids in.
using TrackKey = std::tuple<int, int, int>;

}  // namespace

std::int64_t trace_nanoseconds(double seconds) {
  return static_cast<std::int64_t>(std::llround(seconds * nanoseconds_per_second));
}

double trace_microseconds(std::int64_t nanoseconds) {
  return static_cast<double>(nanoseconds) / nanoseconds_per_microsecond;
}

int node_count(const Trace& trace) {
  return trace.gpus_per_node > 0 ? (trace.world_size + trace.gpus_per_node - 1) / trace.gpus_per_node : 1;
}

int node_of_rank(const Trace& trace, int rank) {
  return trace.gpus_per_node > 0 ? rank / trace.gpus_per_node : 0;
}

int process_of_node(int node) {
  return node + 1;
}

int time_axis_process(const Trace& trace) {
  return node_count(trace) + 1;
}

int nic_process_of_node(const Trace& trace, int node) {
  return node_count(trace) + 2 + node;
}

int node_sort_index(int node) {
  return node;
}

int nic_sort_index(const Trace& trace, int node) {
  return node_count(trace) + node;
}

TrackKind track_kind(EventCategory category) {
  switch (category) {
    case EventCategory::attention:
    case EventCategory::gemm:
      return TrackKind::compute;
    case EventCategory::send:
      return TrackKind::send;
    case EventCategory::recv:
      return TrackKind::recv;
    case EventCategory::remap:
    case EventCategory::collective:
    case EventCategory::tensor_parallel:
      return TrackKind::collective;
    case EventCategory::route_dispatch:
    case EventCategory::route_nic:
    case EventCategory::route_combine:
      return TrackKind::relay;
  }
  return TrackKind::compute;
}

TrackLayout lay_out_tracks(const Trace& trace) {
  const std::size_t n = trace.events.size();
  TrackLayout layout;
  layout.start_ns.resize(n);
  layout.end_ns.resize(n);
  std::map<std::pair<int, int>, std::vector<std::size_t>> groups;  // (rank, kind) -> events
  for (std::size_t i = 0; i < n; ++i) {
    const TraceEvent& e = trace.events[i];
    layout.start_ns[i] = trace_nanoseconds(e.start);
    layout.end_ns[i] = std::max(layout.start_ns[i], trace_nanoseconds(e.end));
    groups[{e.rank, static_cast<int>(track_kind(e.category))}].push_back(i);
  }

  std::vector<TrackKey> key_of_event(n);
  std::map<TrackKey, int> track_index;
  for (auto& [group, members] : groups) {
    std::stable_sort(members.begin(), members.end(), [&](std::size_t a, std::size_t b) {
      return std::tie(layout.start_ns[a], layout.end_ns[a]) < std::tie(layout.start_ns[b], layout.end_ns[b]);
    });
    const std::vector<int> lanes = first_fit_lanes(members, layout.start_ns, layout.end_ns);
    for (std::size_t m = 0; m < members.size(); ++m) {
      key_of_event[members[m]] = {group.first, group.second, lanes[m]};
      track_index.emplace(key_of_event[members[m]], 0);
    }
  }

  int tid = 1;
  for (auto& [key, index] : track_index) {
    const auto [rank, kind, lane] = key;
    Track track;
    track.pid = process_of_node(node_of_rank(trace, rank));
    track.tid = tid++;
    track.rank = rank;
    track.kind = static_cast<TrackKind>(kind);
    track.lane = lane;
    track.name = lane == 0 ? fmt::format("rank {} · {}", rank, kind_title(track.kind))
                           : fmt::format("rank {} · {} {}", rank, kind_title(track.kind), lane + 1);
    index = static_cast<int>(layout.tracks.size());
    layout.tracks.push_back(std::move(track));
  }
  layout.track_of_event.resize(n);
  for (std::size_t i = 0; i < n; ++i) layout.track_of_event[i] = track_index.at(key_of_event[i]);
  return layout;
}

std::vector<int> first_fit_lanes(const std::vector<std::size_t>& members,
                                 const std::vector<std::int64_t>& start_ns,
                                 const std::vector<std::int64_t>& end_ns) {
  std::vector<int> lanes;
  lanes.reserve(members.size());
  std::vector<std::int64_t> lane_end;
  for (const std::size_t i : members) {
    std::size_t lane = 0;
    while (lane < lane_end.size() && lane_end[lane] > start_ns[i]) ++lane;
    if (lane == lane_end.size()) lane_end.push_back(0);
    lane_end[lane] = end_ns[i];
    lanes.push_back(static_cast<int>(lane));
  }
  return lanes;
}

nlohmann::ordered_json complete_slice(const std::string& name, const std::string& category,
                                      std::int64_t start_ns, std::int64_t end_ns, const Track& track,
                                      nlohmann::ordered_json args) {
  return nlohmann::ordered_json{{"name", name},
                                {"cat", category},
                                {"ph", "X"},
                                {"ts", trace_microseconds(start_ns)},
                                {"dur", trace_microseconds(end_ns - start_ns)},
                                {"pid", track.pid},
                                {"tid", track.tid},
                                {"args", std::move(args)}};
}

}  // namespace zb::reports
