#pragma once
// The charts of the HTML report, each returned as one inline <svg> element (or a short note when there is
// nothing to draw). They read the same RunSummary as every other reporter plus, for the timeline and the
// per-GPU load, the trace of each system's first feasible iteration.
#include <cstdint>
#include <string>
#include <vector>

#include "core/exec/trace.hpp"
#include "core/workload/batch_record.hpp"
#include "reports/summary.hpp"

namespace zb::reports {

// Above this many GPUs the per-GPU load is a node × GPU heatmap instead of one bar per GPU.
inline constexpr int gpu_bar_chart_limit = 64;
// Above this many NICs the NIC utilisation is a NIC × time heatmap instead of small multiples.
inline constexpr int nic_small_multiples_limit = 32;
// The timeline shows this many ranks from rank 0.
inline constexpr int timeline_ranks = 4;

// Stacked horizontal bar per system: where the critical rank's iteration time goes.
[[nodiscard]] std::string breakdown_chart(const RunSummary& summary);
// Compute time per GPU (attention and linear) of one system's first feasible iteration. A positive
// `axis_max_seconds` fixes the top of the y axis, so several systems can share one scale.
[[nodiscard]] std::string gpu_load_chart(const SystemSummary& system, const Trace& trace,
                                         double axis_max_seconds = 0);
// The busiest GPU's compute time in `trace` (what gpu_load_chart's axis must reach).
[[nodiscard]] double busiest_gpu_compute_seconds(const Trace& trace);
// NIC utilisation over time (one layer, forward then backward) per NIC, transmit and receive.
[[nodiscard]] std::string nic_utilization_chart(const SystemSummary& system, const Trace& trace);
// NVLink utilisation per GPU (per node above gpu_bar_chart_limit GPUs), transmit and receive, mean over
// the system's feasible iterations; a note when the backend records no NVLink loads (html_charts_nvlink.cpp).
[[nodiscard]] std::string nvlink_utilization_chart(const SystemSummary& system);
// Measured NICs: a table of each NIC's counted bytes beside the bytes the Program's transfers put on it,
// and their ratio (html_nic_table.cpp). Called by nic_utilization_chart for a measured run.
[[nodiscard]] std::string measured_nic_table(const RunMetrics& metrics);
// Document lengths of every iteration on a log₂ axis.
[[nodiscard]] std::string length_histogram_chart(const BatchRecord& workload);
// One row per iteration: its batch (documents, tokens, longest, the long-document shares when recorded)
// and the layout each system's plan ran, for the systems whose plans record one (html_iterations.cpp).
[[nodiscard]] std::string iterations_table(const RunResult& run, const RunSummary& summary);
// Gantt chart of the first ranks' compute and communication streams. A positive `axis_span_seconds`
// fixes the length of the time axis, so several systems can share one scale.
[[nodiscard]] std::string timeline_chart(const SystemSummary& system, const Trace& trace,
                                         double axis_span_seconds = 0);

// The unit a time axis uses for values up to `max_seconds`.
struct TimeUnit {
  double per_second = 1;  // multiply seconds by this
  const char* symbol = "s";
};
[[nodiscard]] TimeUnit time_unit_for(double max_seconds);

}  // namespace zb::reports
