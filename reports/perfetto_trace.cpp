#include "reports/perfetto_trace.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "reports/atomic_write.hpp"

namespace zb::reports {
namespace {

constexpr double microseconds_per_second = 1e6;
constexpr int streams_per_rank = 3;  // compute, comm, nic (relay legs)

int stream_index(Stream stream) {
  switch (stream) {
    case Stream::compute: return 0;
    case Stream::comm: return 1;
    case Stream::nic: return 2;
  }
  return 0;
}

const char* stream_title(Stream stream) {
  switch (stream) {
    case Stream::compute: return "compute";
    case Stream::comm: return "comm";
    case Stream::nic: return "relay";
  }
  return "?";
}

int node_of_rank(const Trace& trace, int rank) { return trace.gpus_per_node > 0 ? rank / trace.gpus_per_node : 0; }
int process_of_node(int node) { return node + 1; }  // pid 0 is reserved by some viewers
// Thread ids are unique within the trace, ordered rank-major so tracks sort naturally.
int thread_of(int rank, Stream stream) { return rank * streams_per_rank + stream_index(stream) + 1; }

nlohmann::ordered_json metadata(const char* name, int pid, int tid, const nlohmann::ordered_json& args) {
  return nlohmann::ordered_json{{"name", name}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", args}};
}

void add_track_names(const Trace& trace, nlohmann::ordered_json& events) {
  const int nodes = trace.gpus_per_node > 0 ? (trace.world_size + trace.gpus_per_node - 1) / trace.gpus_per_node : 1;
  for (int node = 0; node < nodes; ++node) {
    events.push_back(metadata("process_name", process_of_node(node), 0, {{"name", fmt::format("node {}", node)}}));
    events.push_back(metadata("process_sort_index", process_of_node(node), 0, {{"sort_index", node}}));
  }
  for (int rank = 0; rank < trace.world_size; ++rank) {
    for (const Stream stream : {Stream::compute, Stream::comm, Stream::nic}) {
      const int pid = process_of_node(node_of_rank(trace, rank));
      const int tid = thread_of(rank, stream);
      events.push_back(metadata("thread_name", pid, tid, {{"name", fmt::format("rank {} {}", rank, stream_title(stream))}}));
      events.push_back(metadata("thread_sort_index", pid, tid, {{"sort_index", tid}}));
    }
  }
}

nlohmann::ordered_json complete_event(const Trace& trace, const TraceEvent& event) {
  nlohmann::ordered_json args;
  args["pass"] = to_string(event.pass);
  args["micro_batch"] = event.micro_batch;
  if (event.bytes > 0) args["bytes"] = event.bytes;
  if (event.flops > 0) args["flops"] = event.flops;
  if (event.peer >= 0) args["peer"] = event.peer;
  if (event.group >= 0) args["group"] = event.group;
  if (event.step >= 0) args["step"] = event.step;
  if (event.op >= 0) args["op"] = event.op;
  return nlohmann::ordered_json{{"name", event.name},
                                {"cat", to_string(event.category)},
                                {"ph", "X"},
                                {"ts", event.start * microseconds_per_second},
                                {"dur", std::max(0.0, event.end - event.start) * microseconds_per_second},
                                {"pid", process_of_node(node_of_rank(trace, event.rank))},
                                {"tid", thread_of(event.rank, event.stream)},
                                {"args", std::move(args)}};
}

// One counter track per NIC link; the series is piecewise constant, which is exactly how Perfetto draws
// counters (each value holds until the next sample).
void add_nic_counters(const LinkLoad& link, nlohmann::ordered_json& events) {
  const std::string name = link.name + " GB/s";
  const int pid = process_of_node(std::max(link.node, 0));
  for (const LoadPoint& point : link.series) {
    events.push_back(nlohmann::ordered_json{{"name", name},
                                            {"cat", to_string(link.kind)},
                                            {"ph", "C"},
                                            {"ts", point.t * microseconds_per_second},
                                            {"pid", pid},
                                            {"args", {{"GB/s", point.bytes_per_second / 1e9}}}});
  }
}

}  // namespace

nlohmann::ordered_json perfetto_trace_json(const Trace& trace, const TraceLabels& labels) {
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  add_track_names(trace, events);
  for (const TraceEvent& event : trace.events) events.push_back(complete_event(trace, event));
  for (const LinkLoad& link : trace.links) {
    if (link.kind == LinkKind::nic_tx || link.kind == LinkKind::nic_rx) add_nic_counters(link, events);
  }
  nlohmann::ordered_json out;
  out["traceEvents"] = std::move(events);
  out["displayTimeUnit"] = "ns";
  out["otherData"] = {{"scenario", labels.scenario},
                      {"system", labels.system},
                      {"backend", trace.backend},
                      {"simulator", trace.simulator_version},
                      {"note", trace.model_note},
                      {"time_axis", "one representative layer: forward, then backward; iteration = layers x (fwd + bwd)"},
                      {"layers", trace.layers}};
  return out;
}

void write_perfetto_trace(const Trace& trace, const TraceLabels& labels, const std::filesystem::path& path) {
  write_file_atomically(path, perfetto_trace_json(trace, labels).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
}

}  // namespace zb::reports
