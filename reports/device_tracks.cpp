#include "reports/device_tracks.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

namespace zb::reports {

DeviceTrackLayout lay_out_device_tracks(const Trace& trace, int first_tid) {
  const std::vector<DeviceActivity>& activity = trace.device_activity;
  const std::size_t n = activity.size();
  DeviceTrackLayout layout;
  layout.start_ns.resize(n);
  layout.end_ns.resize(n);
  std::map<std::pair<int, std::uint32_t>, std::vector<std::size_t>> streams;  // (rank, stream) → records
  for (std::size_t i = 0; i < n; ++i) {
    layout.start_ns[i] = trace_nanoseconds(activity[i].start);
    layout.end_ns[i] = std::max(layout.start_ns[i], trace_nanoseconds(activity[i].end));
    streams[{activity[i].rank, activity[i].cuda_stream}].push_back(i);
  }
  layout.track_of_activity.resize(n);
  int tid = first_tid;
  for (auto& [stream, members] : streams) {
    std::stable_sort(members.begin(), members.end(), [&](std::size_t a, std::size_t b) {
      return std::tie(layout.start_ns[a], layout.end_ns[a]) < std::tie(layout.start_ns[b], layout.end_ns[b]);
    });
    const std::vector<int> lanes = first_fit_lanes(members, layout.start_ns, layout.end_ns);
    const int lane_count = members.empty() ? 0 : *std::max_element(lanes.begin(), lanes.end()) + 1;
    const auto first_track = static_cast<int>(layout.tracks.size());
    for (int lane = 0; lane < lane_count; ++lane) {
      Track track;
      track.pid = process_of_node(node_of_rank(trace, stream.first));
      track.tid = tid++;
      track.rank = stream.first;
      track.kind = TrackKind::device;
      track.lane = lane;
      track.name = lane == 0
                       ? fmt::format("rank {} · cuda stream {}", stream.first, stream.second)
                       : fmt::format("rank {} · cuda stream {} ({})", stream.first, stream.second, lane + 1);
      layout.tracks.push_back(std::move(track));
    }
    for (std::size_t m = 0; m < members.size(); ++m)
      layout.track_of_activity[members[m]] = first_track + lanes[m];
  }
  return layout;
}

nlohmann::ordered_json device_slice(const Trace& trace, const DeviceTrackLayout& layout, std::size_t index) {
  const DeviceActivity& a = trace.device_activity[index];
  nlohmann::ordered_json args;
  args["source"] = "measured (CUPTI)";
  args["kind"] = to_string(a.kind);
  args["pass"] = to_string(a.pass);
  args["cuda_stream"] = a.cuda_stream;
  args["device"] = a.device;
  args["correlation"] = a.correlation;
  if (a.bytes > 0) args["bytes"] = a.bytes;
  if (!a.copy_kind.empty()) args["copy_kind"] = a.copy_kind;
  const Track& track = layout.tracks[static_cast<std::size_t>(layout.track_of_activity[index])];
  return complete_slice(a.name, std::string("cupti ") + to_string(a.kind), layout.start_ns[index],
                        layout.end_ns[index], track, std::move(args));
}

}  // namespace zb::reports
