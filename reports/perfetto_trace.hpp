#pragma once
// Chrome / Perfetto trace JSON (Trace Event Format) of one system's first feasible iteration, so a run can
// be inspected in ui.perfetto.dev or chrome://tracing next to PyTorch-profiler (Kineto) traces.
//
// Layout (docs/REPORT_FORMAT.md): one process per node ("node 0", ...), in it one thread per rank and
// kind of work, split into lanes where slices would overlap ("rank 3 · compute", "rank 3 · send",
// "rank 3 · recv", "rank 3 · relay", ...; reports/trace_tracks.hpp), flow arrows from each send to its
// recv (reports/trace_flows.hpp), and a counter per NIC and direction of every node, idle ones at 0
// (reports/trace_counters.hpp). A cuda run with CUPTI adds what each GPU ran, one track per rank and
// CUDA stream ("rank 3 · cuda stream 14", reports/device_tracks.hpp), its slices labelled measured (CUPTI).
// Times are µs on the trace axis: one representative forward layer, then one backward layer
// (core/exec/trace.hpp); a first process, "time axis", says so where Perfetto shows it (its name, labels and
// one slice per layer), not only in otherData, which viewers do not display.
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
