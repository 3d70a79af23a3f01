#pragma once
// The table of reported figures (issue 36, item 3). Every scalar figure a run reports per iteration and
// per system is declared once in metric_table.cpp: its name as report.json spells it, its unit, which
// direction is better, the docs/METRICS.md anchor of its formula, and an accessor that reads it from one
// iteration. The summary (reports/summary.hpp) aggregates every declared figure over a system's
// iterations, and report.json, the console table, gbench.json, the gates and `compare` iterate the
// table, so a new figure is one declaration (docs/ARCHITECTURE.md, "Adding a metric"). Structured figures
// (the time breakdown, per-NIC and per-GPU figures, timelines, ring steps) keep their own writers.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/metrics/metrics.hpp"
#include "reports/sample_statistics.hpp"
#include "reports/text_table.hpp"

namespace zb::reports {

struct SystemSummary;  // reports/summary.hpp

enum class Better { lower, higher, none };

// How the human-readable outputs (console table, compare's text and Markdown) show a value.
enum class Shown { seconds, si, percent, one_decimal, two_decimals };

// One iteration of one system as the accessors see it.
struct IterationFigures {
  const RunMetrics* metrics = nullptr;  // null when the iteration ran out of memory
  double planner_seconds = 0;           // wall clock of the planner, every iteration
  double predicted_seconds = 0;         // the plan's prediction (feasible iterations)
};

// Where the console's systems table shows a figure (reports/console_table.hpp). A figure with no title
// has no column.
enum class ConsoleGroup { before_speedups, after_speedups };
struct ConsoleColumn {
  std::string_view title = {};       // narrow title; empty: no column
  std::string_view wide_title = {};  // under --wide; empty: `title`
  int importance = 0;                // 0 is kept longest (console_table.hpp)
  ConsoleGroup group = ConsoleGroup::before_speedups;
  Align align = Align::right;
  bool every_row = false;  // also on the row of a system that never fitted (its cell says so)
  // The cell of one system; null: the mean of the figure's aggregates as `shown`.
  std::string (*cell)(const SystemSummary& system, bool wide) = nullptr;
};

struct MetricInfo {
  // The key in report.json's per_iteration[].metrics (a path below it when it has a '/'), and in
  // systems[].samples when sampled; compare's and gbench's key unless they say otherwise below.
  std::string_view name = {};
  std::string_view unit = {};  // SI: "s", "tokens/s", "FLOP", "bytes", "1" for a ratio or share
  Better better = Better::none;
  std::string_view formula = {};  // the anchor in docs/METRICS.md (an `<a id>` or a heading's slug)
  // The figure in one iteration; none when that iteration has no figure (out of memory, or not recorded:
  // NVLink on a measured backend), which leaves it out of the system's aggregates and writes null.
  std::optional<double> (*value)(const IterationFigures& iteration) = nullptr;
  bool in_iteration_metrics = true;  // written under per_iteration[].metrics
  // Where the system's aggregates go in report.json's system object: "section/key"; empty: not written.
  std::string_view aggregates_at = {};
  bool sampled = false;        // its values are listed under systems[].samples
  bool compared = false;       // `compare` tests it (needs `sampled`, and `better` lower or higher)
  std::string_view gate = {};  // the gate metric that reads its mean over feasible iterations; empty: none
  std::string_view gbench_counter = {};  // its user counter in gbench.json; empty: none
  int gbench_position = 0;               // the counters' order in a gbench entry, smallest first
  Shown shown = Shown::si;
  ConsoleColumn console = {};
};

using MetricTable = std::span<const MetricInfo>;

// The figures zeppelin-bench reports, in report.json's order.
[[nodiscard]] MetricTable metric_table();
// The declaration named `name` in `table`, or null.
[[nodiscard]] const MetricInfo* find_metric(MetricTable table, std::string_view name);
// The declaration whose gate is `gate`, or null.
[[nodiscard]] const MetricInfo* find_gate_metric(MetricTable table, std::string_view gate);
// The gate metrics: each declared gate, then "speedup" (a figure of two systems, summary.hpp).
[[nodiscard]] std::vector<std::string> gate_metric_names(MetricTable table);
// `value` as `shown` says, for the console and `compare`.
[[nodiscard]] std::string shown_text(Shown shown, double value);

// The names code refers to (a typo is a compile error, not a missing figure).
namespace metric {
inline constexpr std::string_view iteration_seconds = "iteration_seconds";
inline constexpr std::string_view tokens_per_second = "tokens_per_second";
inline constexpr std::string_view model_tflops_per_gpu = "model_tflops_per_gpu";
inline constexpr std::string_view mfu = "mfu";
inline constexpr std::string_view attention_imbalance = "attention_imbalance";
inline constexpr std::string_view token_imbalance = "token_imbalance";
inline constexpr std::string_view nic_utilization_mean = "nic_utilization_mean";
inline constexpr std::string_view nic_utilization_max = "nic_utilization_max";
inline constexpr std::string_view nic_busy_share_mean = "nic_busy_share_mean";
inline constexpr std::string_view nic_busy_share_max = "nic_busy_share_max";
inline constexpr std::string_view nvlink_bytes = "nvlink_bytes";
inline constexpr std::string_view nvlink_utilization_mean = "nvlink_utilization_mean";
inline constexpr std::string_view nvlink_utilization_max = "nvlink_utilization_max";
inline constexpr std::string_view prediction_ratio = "prediction_ratio";
inline constexpr std::string_view simulation_ratio = "simulation_ratio";
inline constexpr std::string_view predicted_seconds = "predicted_seconds";
inline constexpr std::string_view planner_seconds = "planner_seconds";
inline constexpr std::string_view planner_share = "planner_share";
}  // namespace metric

// The product's rule for planning: hidden behind the iteration it plans, planner_seconds at most this share
// of the predicted iteration (docs/METRICS.md, "planner share"). The console marks a system above it.
inline constexpr double planner_share_limit = 0.02;

}  // namespace zb::reports
