#include "reports/perfetto_trace.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "core/exec/backend_registry.hpp"
#include "reports/atomic_write.hpp"
#include "reports/device_tracks.hpp"
#include "reports/profile_report.hpp"
#include "reports/trace_counters.hpp"
#include "reports/trace_flows.hpp"
#include "reports/trace_tracks.hpp"

namespace zb::reports {
namespace {

constexpr const char* time_axis_note =
    "one representative layer: forward, then backward; iteration = layers x (fwd + bwd)";

// An "M" event. Only the four names Perfetto's JSON parser keeps are written: process_name and
// thread_name ({"name": ...}), process_sort_index and thread_sort_index ({"sort_index": ...}).
nlohmann::ordered_json metadata_event(const char* name, int pid, int tid,
                                      const nlohmann::ordered_json& args) {
  return nlohmann::ordered_json{{"name", name}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", args}};
}

void add_process(int pid, const std::string& name, int sort_index, nlohmann::ordered_json& events) {
  events.push_back(metadata_event("process_name", pid, 0, {{"name", name}}));
  events.push_back(metadata_event("process_sort_index", pid, 0, {{"sort_index", sort_index}}));
}

// Names every track, and sorts them rank by rank: a rank's executor tracks (compute, send, recv,
// collective, relay, in lane order), then its CUDA streams, then the next rank's. tids keep their own
// numbering (executor tracks first); the sort index is the track's place in that order.
void add_tracks(const std::vector<Track>& executor, const std::vector<Track>& device,
                nlohmann::ordered_json& events) {
  std::vector<const Track*> tracks;
  for (const Track& track : executor) tracks.push_back(&track);
  for (const Track& track : device) tracks.push_back(&track);
  std::stable_sort(tracks.begin(), tracks.end(), [](const Track* a, const Track* b) {
    return std::make_tuple(a->rank, static_cast<int>(a->kind), a->tid) <
           std::make_tuple(b->rank, static_cast<int>(b->kind), b->tid);
  });
  for (std::size_t i = 0; i < tracks.size(); ++i) {
    const Track& track = *tracks[i];
    events.push_back(metadata_event("thread_name", track.pid, track.tid, {{"name", track.name}}));
    events.push_back(
        metadata_event("thread_sort_index", track.pid, track.tid, {{"sort_index", static_cast<int>(i)}}));
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

// The "time axis" process, sorted first: the timeline shows process and thread names and slices, not the
// metadata, so this is where a reader of the trace learns that it spans one layer of each pass, not the
// iteration.
void add_time_axis_names(const Trace& trace, int tid, nlohmann::ordered_json& events) {
  const int pid = time_axis_process(trace);
  add_process(pid, "time axis: one representative layer", time_axis_sort_index, events);
  events.push_back(metadata_event("thread_name", pid, tid, {{"name", "layer (1 of each pass)"}}));
}

void add_time_axis_slices(const Trace& trace, const TraceLabels& labels, const std::string& shown, int tid,
                          nlohmann::ordered_json& events) {
  const int pid = time_axis_process(trace);
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
                                              {"iteration_seconds", trace.iteration_seconds},
                                              {"scenario", labels.scenario},
                                              {"system", labels.system}}}});
    // A trace that shows only some nodes says so where the timeline shows it, not only in the metadata.
    if (!shown.empty()) events.back()["args"]["shown"] = shown;
  };
  slice("forward", 0, forward_end);
  if (trace.backward) slice("backward", forward_end, backward_end);
}

// The run's facts as Perfetto's JSON tokenizer reads them: the top-level "metadata" object, one row
// json_metadata.<key> per field. Flat strings and numbers only (an object would be kept as its raw JSON
// text), and a fact the trace does not have is left out rather than written empty.
nlohmann::ordered_json run_facts(const Trace& trace, const TraceLabels& labels, const std::string& shown) {
  nlohmann::ordered_json facts;
  facts["scenario"] = labels.scenario;
  facts["system"] = labels.system;
  facts["backend"] = trace.backend;
  facts["timing"] = is_simulated_backend(trace.backend) ? "simulated" : "measured";
  if (!trace.simulator_version.empty()) facts["simulator"] = trace.simulator_version;
  if (!trace.model_note.empty()) facts["model"] = trace.model_note;
  if (!trace.stand_in.empty()) facts["stand_in"] = trace.stand_in;
  if (labels.hardware_profile != nullptr) {
    constexpr std::string_view prefix = "hardware profile: ";
    std::string profile = profile_statement(*labels.hardware_profile);
    if (profile.rfind(prefix, 0) == 0) profile.erase(0, prefix.size());
    facts["hardware_profile"] = profile;
  }
  facts["time_axis"] = time_axis_note;
  facts["layers"] = trace.layers;
  facts["passes"] = trace.backward ? "fwd+bwd" : "fwd";
  facts["iteration_seconds"] = trace.iteration_seconds;
  facts["world_size"] = trace.world_size;
  facts["nodes"] = node_count(trace);
  facts["gpus_per_node"] = trace.gpus_per_node;
  facts["nics_per_node"] = trace.nics_per_node;
  if (!shown.empty()) facts["shown"] = shown;
  return facts;
}

}  // namespace

TraceLabels trace_labels(const RunResult& run, const std::string& system) {
  return TraceLabels{run.scenario.name, system, &run.scenario.hardware_profile};
}

nlohmann::ordered_json perfetto_trace_json(const Trace& whole, const TraceLabels& labels,
                                           TraceLimits limits) {
  const TraceSample sample = sample_nodes(whole, limits.max_slices);
  std::optional<Trace> part;
  if (!sample.everything()) part = restricted_to(whole, sample);
  const Trace& trace = part ? *part : whole;
  const std::string shown = sample.statement(whole);
  const TrackLayout layout = lay_out_tracks(trace);
  const DeviceTrackLayout device = lay_out_device_tracks(trace, static_cast<int>(layout.tracks.size()) + 1);
  // tids, unique in the trace: executor tracks, device tracks, the time axis, then one per NIC process.
  const int time_axis_tid = static_cast<int>(layout.tracks.size() + device.tracks.size()) + 1;
  const int first_counter_tid = time_axis_tid + 1;

  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  add_time_axis_names(trace, time_axis_tid, events);
  for (const int node : sample.nodes)
    add_process(process_of_node(node), fmt::format("node {}", node), node_sort_index(node), events);
  add_tracks(layout.tracks, device.tracks, events);
  for (const int node : nodes_with_nic_counters(trace, sample.nodes)) {
    add_process(nic_process_of_node(trace, node), fmt::format("node {} \u00b7 NICs", node),
                nic_sort_index(trace, node), events);
  }

  for (std::size_t i = 0; i < trace.events.size(); ++i)
    events.push_back(complete_event(trace.events[i], layout, i));
  for (std::size_t i = 0; i < trace.device_activity.size(); ++i)
    events.push_back(device_slice(trace, device, i));
  add_transfer_flows(trace, layout, events);
  add_nic_counters(trace, sample.nodes, first_counter_tid, events);
  add_time_axis_slices(trace, labels, shown, time_axis_tid, events);

  nlohmann::ordered_json out;
  out["traceEvents"] = std::move(events);
  out["displayTimeUnit"] = "ns";
  out["metadata"] = run_facts(trace, labels, shown);
  out["otherData"] = {{"scenario", labels.scenario}, {"system", labels.system},
                      {"backend", trace.backend},    {"simulator", trace.simulator_version},
                      {"note", trace.model_note},    {"time_axis", time_axis_note},
                      {"layers", trace.layers}};
  return out;
}

void write_perfetto_trace(const Trace& trace, const TraceLabels& labels, const std::filesystem::path& path,
                          TraceLimits limits) {
  write_file_atomically(path, perfetto_trace_json(trace, labels, limits)
                                  .dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
}

}  // namespace zb::reports
