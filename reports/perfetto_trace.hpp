#pragma once
// Chrome / Perfetto trace JSON (Trace Event Format) of one system's first feasible iteration, so a run can
// be inspected in ui.perfetto.dev or chrome://tracing next to PyTorch-profiler (Kineto) traces.
//
// Written for what the viewers' importers actually read (docs/REPORT_FORMAT.md; Perfetto's
// src/trace_processor/importers/json/json_trace_tokenizer.cc and json_trace_parser.cc, catapult's
// tracing/extras/importer/trace_event_importer.html):
// - the run's facts (scenario, system, backend, simulated or measured, simulator, hardware profile, the
//   time-axis note) are the top-level "metadata" object, flat strings and numbers: Perfetto (v58.0 on) reads
//   no other top-level key but traceEvents, systemTraceEvents and displayTimeUnit, and keeps each field as
//   a row json_metadata.<key> of its metadata table. "otherData" stays as before for readers that look there
//   (catapult lists every top-level key as metadata; Perfetto skips it);
// - "M" events are only the four Perfetto keeps: process_name, thread_name, process_sort_index and
//   thread_sort_index (it drops any other, process_labels among them);
// - the sort indices put the ranks first: a first process, "time axis: one representative layer", then one
//   process per node ("node 0", ...) whose threads are its ranks' tracks in rank order, then each node's NIC
//   counters in a process of their own ("node 0 · NICs"; reports/trace_tracks.hpp lists pids and indices);
// - every counter event ("ph": "C") carries a pid and a tid (reports/trace_counters.hpp).
//
// Layout: in a node's process one thread per rank and kind of work, split into lanes where slices would
// overlap ("rank 3 · compute", "rank 3 · send", "rank 3 · recv", "rank 3 · relay", ...;
// reports/trace_tracks.hpp), flow arrows from each send to its recv (reports/trace_flows.hpp), and a
// counter per NIC and direction of every node, idle ones at 0 (reports/trace_counters.hpp). A cuda run with
// CUPTI adds what each GPU ran, one track per rank and CUDA stream ("rank 3 · cuda stream 14",
// reports/device_tracks.hpp), sorted after that rank's own tracks, its slices labelled measured (CUPTI).
// Times are µs on the trace axis: one representative forward layer, then one backward layer
// (core/exec/trace.hpp); the "time axis" process says so where the timeline shows it (its name and one
// slice per layer), the metadata says it too.
//
// Size: a trace of more than TraceLimits::max_slices slices shows whole nodes within that budget
// (reports/trace_sampling.hpp), and says which in metadata.shown and on the time axis.
#include <cstddef>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "core/config/hardware_profile.hpp"
#include "core/exec/trace.hpp"
#include "core/run/run_result.hpp"
#include "reports/trace_sampling.hpp"

namespace zb::reports {

struct TraceLabels {
  std::string scenario;
  std::string system;
  // The run's hardware profile, for metadata.hardware_profile (its source and the values that differ from
  // the defaults); left out of the metadata when null. Not owned: it outlives the call.
  const HardwareProfileSpec* hardware_profile = nullptr;
};

// The labels of `system`'s trace in `run`: the scenario's name and its hardware profile (pointing into run).
[[nodiscard]] TraceLabels trace_labels(const RunResult& run, const std::string& system);

struct TraceLimits {
  std::size_t max_slices = default_max_trace_slices;
};

[[nodiscard]] nlohmann::ordered_json perfetto_trace_json(const Trace& trace, const TraceLabels& labels,
                                                         TraceLimits limits = {});

// Writes perfetto_trace_json atomically to `path`.
void write_perfetto_trace(const Trace& trace, const TraceLabels& labels, const std::filesystem::path& path,
                          TraceLimits limits = {});

}  // namespace zb::reports
