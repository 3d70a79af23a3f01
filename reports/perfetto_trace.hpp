#pragma once
// Chrome / Perfetto trace JSON (Trace Event Format) of one system's first feasible iteration, so a run can
// be inspected in ui.perfetto.dev or chrome://tracing next to PyTorch-profiler (Kineto) traces.
//
// Layout: one process per node ("node 0", ...). Inside it one thread per rank and stream ("rank 3
// compute", "rank 3 comm", "rank 3 relay"): Perfetto draws overlapping complete events on one track
// wrongly, and each stream is sequential by construction. NIC throughput is a counter track per NIC and
// direction ("n0-nic3-tx GB/s") in the node's process. Times are µs on the trace axis: one representative
// forward layer, then one backward layer (core/exec/trace.hpp).
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "core/exec/trace.hpp"

namespace zb::reports {

struct TraceLabels {
  std::string scenario;
  std::string system;
};

[[nodiscard]] nlohmann::ordered_json perfetto_trace_json(const Trace& trace, const TraceLabels& labels);

// Writes perfetto_trace_json atomically to `path`.
void write_perfetto_trace(const Trace& trace, const TraceLabels& labels, const std::filesystem::path& path);

}  // namespace zb::reports
