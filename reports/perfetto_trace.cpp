#include "reports/perfetto_trace.hpp"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "reports/atomic_write.hpp"
#include "reports/device_tracks.hpp"
#include "reports/trace_counters.hpp"
#include "reports/trace_flows.hpp"
#include "reports/trace_tracks.hpp"

namespace zb::reports {
namespace {

constexpr const char* time_axis_note =
    "one representative layer: forward, then backward; iteration = layers x (fwd + bwd)";

nlohmann::ordered_json metadata(const char* name, int pid, int tid, const nlohmann::ordered_json& args) {
  return nlohmann::ordered_json{{"name", name}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", args}};
}

void add_process_names(const Trace& trace, nlohmann::ordered_json& events) {
  for (int node = 0; node < node_count(trace); ++node) {
    events.push_back(
        metadata("process_name", process_of_node(node), 0, {{"name", fmt::format("node {}", node)}}));
    events.push_back(metadata("process_sort_index", process_of_node(node), 0, {{"sort_index", node}}));
  }
}

void add_track_names(const std::vector<Track>& tracks, nlohmann::ordered_json& events) {
  for (const Track& track : tracks) {
    events.push_back(metadata("thread_name", track.pid, track.tid, {{"name", track.name}}));
    events.push_back(metadata("thread_sort_index", track.pid, track.tid, {{"sort_index", track.tid}}));
  }
}

nlohmann::ordered_json complete_event(const TraceEvent& event, const TrackLayout& layout, std::size_t index) {
  nlohmann::ordered_json args;
  args["pass"] = to_string(event.pass);
  args["micro_batch"] = event.micro_batch;
  if (event.bytes > 0) args["bytes"] = event.bytes;
  if (event.flops > 0) args["flops"] = event.flops;
  if (event.interference_seconds > 0) args["interference_us"] = event.interference_seconds * 1e6;
  if (event.peer >= 0) args["peer"] = event.peer;
  if (event.group >= 0) args["group"] = event.group;
  if (event.step >= 0) args["step"] = event.step;
  if (event.op >= 0) args["op"] = event.op;
  const Track& track = layout.tracks[static_cast<std::size_t>(layout.track_of_event[index])];
  return complete_slice(event.name, to_string(event.category), layout.start_ns[index], layout.end_ns[index],
                        track, std::move(args));
}

// The "time axis" process, sorted first: viewers show process names, labels and slices, never otherData,
// so this is where a reader of the trace learns that it spans one layer of each pass, not the iteration.
void add_time_axis(const Trace& trace, const TraceLabels& labels, int tid, nlohmann::ordered_json& events) {
  const int pid = process_of_node(node_count(trace));
  events.push_back(metadata("process_name", pid, 0, {{"name", "time axis: one representative layer"}}));
  events.push_back(metadata("process_labels", pid, 0,
                            {{"labels", fmt::format("{}; {} layers; {} / {}", time_axis_note, trace.layers,
                                                    labels.scenario, labels.system)}}));
  events.push_back(metadata("process_sort_index", pid, 0, {{"sort_index", -1}}));
  events.push_back(metadata("thread_name", pid, tid, {{"name", "layer (1 of each pass)"}}));
  const std::int64_t forward_end = trace_nanoseconds(trace.layer.forward);
  const std::int64_t backward_end = std::max(forward_end, trace_nanoseconds(trace.trace_seconds()));
  const auto slice = [&](const char* pass, std::int64_t from, std::int64_t to) {
    events.push_back(nlohmann::ordered_json{{"name", fmt::format("{} layer (1 of {})", pass, trace.layers)},
                                            {"cat", "time-axis"},
                                            {"ph", "X"},
                                            {"ts", trace_microseconds(from)},
                                            {"dur", trace_microseconds(to - from)},
                                            {"pid", pid},
                                            {"tid", tid},
                                            {"args",
                                             {{"note", time_axis_note},
                                              {"layers", trace.layers},
                                              {"iteration_seconds", trace.iteration_seconds}}}});
  };
  slice("forward", 0, forward_end);
  if (trace.backward) slice("backward", forward_end, backward_end);
}

}  // namespace

nlohmann::ordered_json perfetto_trace_json(const Trace& trace, const TraceLabels& labels) {
  const TrackLayout layout = lay_out_tracks(trace);
  const DeviceTrackLayout device = lay_out_device_tracks(trace, static_cast<int>(layout.tracks.size()) + 1);
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  add_process_names(trace, events);
  add_track_names(layout.tracks, events);
  add_track_names(device.tracks, events);
  for (std::size_t i = 0; i < trace.events.size(); ++i)
    events.push_back(complete_event(trace.events[i], layout, i));
  for (std::size_t i = 0; i < trace.device_activity.size(); ++i)
    events.push_back(device_slice(trace, device, i));
  add_transfer_flows(trace, layout, events);
  add_nic_counters(trace, events);
  add_time_axis(trace, labels, static_cast<int>(layout.tracks.size() + device.tracks.size()) + 1, events);
  nlohmann::ordered_json out;
  out["traceEvents"] = std::move(events);
  out["displayTimeUnit"] = "ns";
  out["otherData"] = {{"scenario", labels.scenario}, {"system", labels.system},
                      {"backend", trace.backend},    {"simulator", trace.simulator_version},
                      {"note", trace.model_note},    {"time_axis", time_axis_note},
                      {"layers", trace.layers}};
  return out;
}

void write_perfetto_trace(const Trace& trace, const TraceLabels& labels, const std::filesystem::path& path) {
  write_file_atomically(path, perfetto_trace_json(trace, labels)
                                  .dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
}

}  // namespace zb::reports
