#pragma once
// The figures every reporter shows, computed once from a RunResult: per system the aggregates over
// iterations and the options it ran with, the baselines ranked strongest first with the best one named,
// the speed-ups against each of them, and the gate results. The console table, the JSON
// report, the HTML report and the gbench file all read this struct, so they cannot disagree.
// Definitions: docs/METRICS.md ("Run metrics" and "Report figures").
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/scenario.hpp"
#include "core/metrics/long_documents.hpp"
#include "core/metrics/metrics.hpp"
#include "core/run/run_result.hpp"
#include "reports/layouts.hpp"
#include "reports/metric_table.hpp"
#include "reports/sample_statistics.hpp"

namespace zb::reports {

// One figure of the metric table over a system's iterations.
struct FigureSeries {
  const MetricInfo* info = nullptr;
  std::vector<double> samples;  // in iteration order, the iterations that have the figure
  SampleAggregates aggregates;
};

struct SystemSummary {
  std::size_t index = 0;  // position in the scenario (picks the system's colour)
  std::string label;
  std::string strategy;
  bool is_baseline = false;  // the strategy registered as a baseline (SystemInfo::baseline)
  int iterations = 0;
  int feasible_iterations = 0;
  std::vector<std::string> oom;  // one line per OOM report, "iteration 2: rank 5 ..."
  int verification_problems = 0;
  std::vector<std::string> verification;  // the first problems, "iteration 0: ..."

  // Per feasible iteration, in iteration order.
  std::vector<RunMetrics> per_iteration;
  // One series per figure of the metric table the summary was made with (RunSummary::metrics), in its
  // order: the values of the iterations that have the figure (reports/metric_table.hpp says which), and
  // their aggregates (count 0 when none has it: reports show "not recorded" or null instead of 0).
  std::vector<FigureSeries> figures;
  // Measured runs: the means of the simulator's and the measured layers time over the iterations that
  // have a simulation ratio; and, when the executor computed a stand-in for the model, what it computed
  // (Trace::stand_in) and so no ratio.
  double simulated_layers_seconds = 0;
  double measured_layers_seconds = 0;
  std::string stand_in;
  TimeBreakdown critical_rank;  // mean over feasible iterations (seconds per iteration)
  TimeBreakdown mean_rank;
  std::vector<NicMetrics> nics;        // mean over feasible iterations (timelines too), node-major
  std::vector<NvlinkMetrics> nvlinks;  // mean over the iterations that recorded them, node-major

  // The options it ran with, "auto" resolved (reports/resolved_options.hpp), and the same as one line.
  nlohmann::ordered_json resolved_options = nlohmann::ordered_json::object();
  std::string resolved_options_text;
  // The layout each iteration's plan ran (reports/layouts.hpp): by iteration number, "" where the plan
  // records none, and counted over the feasible iterations (empty when no plan records a layout).
  std::vector<std::string> layout_per_iteration;
  std::vector<LayoutCount> layouts;
  // Mean iteration time of the best baseline / this system's; 1 for the best baseline itself. None when
  // there is no best baseline or this system ran out of memory in some iteration.
  std::optional<double> speedup_vs_best;

  // The series of the figure named `name` (reports/metric_table.hpp, `metric::`); an empty one when the
  // summary's table has no such figure.
  [[nodiscard]] const FigureSeries& figure(std::string_view name) const;
  [[nodiscard]] const std::vector<double>& samples(std::string_view name) const {
    return figure(name).samples;
  }
  [[nodiscard]] const SampleAggregates& aggregates(std::string_view name) const {
    return figure(name).aggregates;
  }

  [[nodiscard]] bool feasible() const { return feasible_iterations > 0; }
  [[nodiscard]] bool fits_every_iteration() const {
    return feasible_iterations == iterations && iterations > 0;
  }
};

struct Speedup {
  std::string system;
  std::string baseline;
  double value = 0;  // baseline mean iteration time / system mean iteration time
};

struct GateResult {
  GateSpec gate;
  std::optional<double> observed;  // none when the system had no feasible iteration
  bool passed = false;
  std::string description;  // "speedup zeppelin vs ring-cp ≥ 1.2"
  std::string baseline;     // the label compared against ("best" resolved); empty when none
  std::string reason;       // why it failed, or empty
};

struct RunSummary {
  // The figures every system is summarized over (reports/metric_table.hpp): the reporters iterate it.
  MetricTable metrics;
  std::string scenario;
  std::uint64_t seed = 0;  // the effective seed, after overrides
  int iterations = 0;      // the effective iteration count, after overrides
  std::string backend;
  bool simulated = false;
  std::string simulator_version;  // "SimGrid 3.32" when simulated
  std::string backend_note;       // the executor's one-line account of how times were obtained
  std::string model;              // "llama-7b" or "custom (32 layers, hidden 4096)"
  std::string cluster;            // "2 × dgx-h200 (16 GPUs)"
  std::string
      hardware_profile;  // reports/profile_report.hpp: "hardware profile: defaults" or its source and changes
  double planner_error = 0;  // the scenario's planner_error (docs/METRICS.md, "Planner error")
  // Per batch, the shares in documents longer than one GPU's and one node's token capacity (the same for
  // every system; not recorded for a hand-built result).
  LongDocumentRecord long_documents;
  std::vector<SystemSummary> systems;
  // Baseline labels from strongest to weakest (reports/best_baseline.hpp): the order of every report's
  // speed-up columns. The best baseline is the fastest one that fitted in every iteration, if any.
  std::vector<std::string> baseline_ranking;
  std::optional<std::string> best_baseline;
  std::vector<Speedup> speedups;  // per system in scenario order, baselines strongest first
  std::vector<GateResult> gates;

  [[nodiscard]] bool gates_passed() const;
  [[nodiscard]] const SystemSummary* find(const std::string& label) const;
  [[nodiscard]] std::optional<double> speedup(const std::string& system, const std::string& baseline) const;
};

// What the metric table's accessors read of one iteration (pointing into `iteration`).
[[nodiscard]] IterationFigures iteration_figures(const IterationResult& iteration);

// `metrics`: the figures to summarize, metric_table() unless a test adds its own.
[[nodiscard]] RunSummary summarize_run(const RunResult& run, MetricTable metrics = metric_table());

// The observed value a gate judges: the mean over feasible iterations of the figure the summary's metric
// table declares for the gate, or the speed-up (docs/METRICS.md, "Report figures").
[[nodiscard]] std::optional<double> gate_observed_value(const RunSummary& summary, const GateSpec& gate);

}  // namespace zb::reports
