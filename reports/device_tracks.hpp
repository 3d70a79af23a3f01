#pragma once
// The Perfetto tracks of what the GPUs themselves ran (Trace::device_activity: CUPTI's kernel, NCCL
// kernel, memcpy and memset records of the cuda backend): one track per rank and CUDA stream, "rank 3 ·
// cuda stream 14", in the rank's node process, sorted right after that rank's own tracks (its tids come
// after every executor track; reports/perfetto_trace.cpp writes the sort index), split into lanes where
// slices would overlap (reports/trace_tracks.hpp says why viewers need that; a stream runs its work in
// order, but records mapped from the GPU's clock may touch by a nanosecond). Every slice says it is
// measured by CUPTI (args.source), so it is never read as a modelled or executor-timed figure.
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/exec/trace.hpp"
#include "reports/trace_tracks.hpp"

namespace zb::reports {

struct DeviceTrackLayout {
  std::vector<Track> tracks;                   // kind TrackKind::device, tids from the first one asked
  std::vector<int> track_of_activity;          // index into tracks, per trace.device_activity entry
  std::vector<std::int64_t> start_ns, end_ns;  // per trace.device_activity entry, end >= start
};

// Tracks in (rank, stream, lane) order, their tids counting up from `first_tid`.
[[nodiscard]] DeviceTrackLayout lay_out_device_tracks(const Trace& trace, int first_tid);

// The complete slice ("ph": "X") of trace.device_activity[index].
[[nodiscard]] nlohmann::ordered_json device_slice(const Trace& trace, const DeviceTrackLayout& layout,
                                                  std::size_t index);

}  // namespace zb::reports
