#pragma once
// Which nodes a Perfetto trace shows. A trace holds one slice per operation of every rank, so it grows
// with ranks × ops per rank: ring CP over 128 GPUs is 520k slices and 147 MB, over 1024 GPUs it would be
// some 9 GB, far past what a viewer opens or anyone reads. Above a budget of slices the trace shows whole
// nodes (their ranks' slices, the arrows between them, their NICs' counters) chosen so the interesting
// ones are in: node 0, the node of the rank that finishes last (the critical path's end), then nodes
// spread evenly over the cluster (bit-reversed order: the middle, the quarters, ...), each taken if its
// slices still fit. At least node 0 is shown, whatever its size. docs/REPORT_FORMAT.md, "Size".
#include <cstddef>
#include <string>
#include <vector>

#include "core/exec/trace.hpp"

namespace zb::reports {

// A trace of up to this many slices is written whole; above, whole nodes are chosen to fit. About 50 MB
// of JSON with the arrows and counters that come with them: Perfetto's and chrome://tracing's importers
// open it in seconds.
inline constexpr std::size_t default_max_trace_slices = 200'000;

struct TraceSample {
  std::vector<int> nodes;  // shown, ascending
  int total_nodes = 0;
  std::size_t slices = 0;  // of the shown nodes
  std::size_t total_slices = 0;
  [[nodiscard]] bool everything() const { return static_cast<int>(nodes.size()) == total_nodes; }
  // "nodes 0, 5, 7: 24 of 128 ranks (96,000 of 520,000 slices)"; empty when everything is shown.
  [[nodiscard]] std::string statement(const Trace& trace) const;
};

[[nodiscard]] TraceSample sample_nodes(const Trace& trace, std::size_t max_slices);

// The trace as far as `sample` shows it: its nodes' ranks' events and device activity, and their links.
[[nodiscard]] Trace restricted_to(const Trace& trace, const TraceSample& sample);

}  // namespace zb::reports
