#pragma once
// Which track (pid, tid) of the Perfetto trace each TraceEvent goes to.
//
// Viewers draw complete slices ("ph": "X") of one thread as a stack: two slices on one tid that overlap
// without nesting are mis-drawn by chrome://tracing and reported as import errors by Perfetto. A rank's
// transfers do overlap (sends of one ring step run while the previous step's receive is still arriving,
// relay legs of several messages share a proxy), so each rank gets one track per kind of work (compute,
// send, recv, collective, relay) and a kind whose slices overlap is split into lanes ("rank 3 · send",
// "rank 3 · send 2", ...): first fit in start order, the fewest lanes interval colouring allows, and no
// two slices of one lane overlap at all.
//
// Times are rounded to whole nanoseconds before lanes are chosen, and written from those integers, so the
// check "next start >= previous end" holds exactly on the values in the file, not only before rounding.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/exec/trace.hpp"

namespace zb::reports {

// device: a CUDA stream as CUPTI saw it (Trace::device_activity; reports/device_tracks.hpp).
enum class TrackKind { compute, send, recv, collective, relay, device };

// Seconds on the trace axis to whole nanoseconds, and nanoseconds to the µs the Trace Event Format uses.
[[nodiscard]] std::int64_t trace_nanoseconds(double seconds);
[[nodiscard]] double trace_microseconds(std::int64_t nanoseconds);

[[nodiscard]] int node_count(const Trace& trace);
[[nodiscard]] int node_of_rank(const Trace& trace, int rank);

// The trace's processes (pid 0 is reserved by some viewers), in the order viewers draw them, which is
// their process_sort_index (docs/REPORT_FORMAT.md):
//   "time axis: one representative layer"   pid nodes + 1       sort index -1
//   "node N" (its ranks' tracks)            pid N + 1           sort index N
//   "node N · NICs" (its NIC counters)      pid nodes + 2 + N   sort index nodes + N
// so every rank's track comes before every NIC counter (both viewers draw a process's counters above its
// threads, so counters that shared a process with the ranks were the first thing in sight).
[[nodiscard]] int process_of_node(int node);
[[nodiscard]] int time_axis_process(const Trace& trace);
[[nodiscard]] int nic_process_of_node(const Trace& trace, int node);
[[nodiscard]] int node_sort_index(int node);
[[nodiscard]] int nic_sort_index(const Trace& trace, int node);
inline constexpr int time_axis_sort_index = -1;

struct Track {
  int pid = 0;
  int tid = 0;  // unique within the trace, in rank, kind, lane order, so the same trace gets the same tids
  int rank = 0;
  TrackKind kind = TrackKind::compute;
  int lane = 0;
  std::string name;  // "rank 3 · send", "rank 3 · send 2"
};

struct TrackLayout {
  std::vector<Track> tracks;                   // only tracks that hold at least one slice
  std::vector<int> track_of_event;             // index into tracks, per trace.events entry
  std::vector<std::int64_t> start_ns, end_ns;  // per trace.events entry, end >= start
};

[[nodiscard]] TrackKind track_kind(EventCategory category);
[[nodiscard]] TrackLayout lay_out_tracks(const Trace& trace);

// A complete slice ("ph": "X") on `track` from `start_ns` to `end_ns`, in the Trace Event Format's µs.
[[nodiscard]] nlohmann::ordered_json complete_slice(const std::string& name, const std::string& category,
                                                    std::int64_t start_ns, std::int64_t end_ns,
                                                    const Track& track, nlohmann::ordered_json args);

// First fit in start order: each slice of `members` (indices into start_ns and end_ns, sorted by (start,
// end)) joins the lowest lane whose last slice has ended by its start. Each member's lane, in order.
[[nodiscard]] std::vector<int> first_fit_lanes(const std::vector<std::size_t>& members,
                                               const std::vector<std::int64_t>& start_ns,
                                               const std::vector<std::int64_t>& end_ns);

}  // namespace zb::reports
