#include "reports/summary.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/config/known_names.hpp"
#include "core/config/system_catalog.hpp"
#include "core/exec/backend_registry.hpp"
#include "reports/best_baseline.hpp"
#include "reports/profile_report.hpp"
#include "reports/resolved_options.hpp"

namespace zb::reports {
namespace {

// How many verification problems a summary keeps verbatim; the count is always exact.
constexpr std::size_t verification_lines_kept = 20;

std::string model_text(const ModelSpec& model) {
  if (!model.preset.empty()) return model.preset;
  return fmt::format("custom ({} layers, hidden {})", model.layers, model.hidden);
}

std::string cluster_text(const ClusterSpec& cluster) {
  const std::string name = cluster.preset.empty() ? cluster.gpu.name : cluster.preset;
  return fmt::format("{} \u00d7 {} ({} GPUs)", cluster.nodes, name, cluster.world_size());
}

TimeBreakdown mean_breakdown(const std::vector<RunMetrics>& metrics, TimeBreakdown RunMetrics::*field) {
  TimeBreakdown mean;
  if (metrics.empty()) return mean;
  const auto n = static_cast<double>(metrics.size());
  for (const RunMetrics& m : metrics) {
    const TimeBreakdown& b = m.*field;
    for (double TimeBreakdown::*part :
         {&TimeBreakdown::attention, &TimeBreakdown::linear, &TimeBreakdown::remap,
          &TimeBreakdown::tensor_parallel, &TimeBreakdown::exposed_communication, &TimeBreakdown::idle,
          &TimeBreakdown::embedding_and_head, &TimeBreakdown::gradient_sync_exposed,
          &TimeBreakdown::optimizer}) {
      mean.*part += b.*part / n;
    }
  }
  return mean;
}

void add_scaled(std::vector<double>& into, const std::vector<double>& values, double scale) {
  if (into.size() < values.size()) into.resize(values.size(), 0.0);
  for (std::size_t i = 0; i < values.size(); ++i) into[i] += values[i] * scale;
}

// NIC figures averaged per NIC over iterations; every feasible iteration lists the same NICs, node-major.
std::vector<NicMetrics> mean_nics(const std::vector<RunMetrics>& metrics) {
  if (metrics.empty()) return {};
  const auto n = static_cast<double>(metrics.size());
  std::vector<NicMetrics> out = metrics.front().nics;
  for (NicMetrics& nic : out) {
    nic.tx_bytes = nic.rx_bytes = nic.tx_utilization = nic.rx_utilization = nic.busy_share = 0;
    if (nic.measured) nic.expected_tx_bytes = nic.expected_rx_bytes = 0;  // measured runs: averaged too
    nic.tx_timeline.assign(nic.tx_timeline.size(), 0.0);
    nic.rx_timeline.assign(nic.rx_timeline.size(), 0.0);
  }
  for (const RunMetrics& m : metrics) {
    for (std::size_t k = 0; k < out.size() && k < m.nics.size(); ++k) {
      out[k].tx_bytes += m.nics[k].tx_bytes / n;
      out[k].rx_bytes += m.nics[k].rx_bytes / n;
      out[k].tx_utilization += m.nics[k].tx_utilization / n;
      out[k].rx_utilization += m.nics[k].rx_utilization / n;
      out[k].busy_share += m.nics[k].busy_share / n;
      if (out[k].measured) {
        out[k].expected_tx_bytes += std::max(0.0, m.nics[k].expected_tx_bytes) / n;
        out[k].expected_rx_bytes += std::max(0.0, m.nics[k].expected_rx_bytes) / n;
      }
      add_scaled(out[k].tx_timeline, m.nics[k].tx_timeline, 1 / n);
      add_scaled(out[k].rx_timeline, m.nics[k].rx_timeline, 1 / n);
    }
  }
  return out;
}

// NVLink figures averaged per GPU over the iterations that recorded them (every such iteration lists the
// same GPUs in the same order).
std::vector<NvlinkMetrics> mean_nvlinks(const std::vector<RunMetrics>& metrics) {
  std::vector<NvlinkMetrics> out;
  double recorded = 0;
  for (const RunMetrics& m : metrics) {
    if (!m.nvlink_recorded()) continue;
    if (out.empty()) {
      out = m.nvlinks;
      for (NvlinkMetrics& g : out) g.tx_bytes = g.rx_bytes = g.tx_utilization = g.rx_utilization = 0;
    }
    recorded += 1;
    for (std::size_t k = 0; k < out.size() && k < m.nvlinks.size(); ++k) {
      out[k].tx_bytes += m.nvlinks[k].tx_bytes;
      out[k].rx_bytes += m.nvlinks[k].rx_bytes;
      out[k].tx_utilization += m.nvlinks[k].tx_utilization;
      out[k].rx_utilization += m.nvlinks[k].rx_utilization;
    }
  }
  for (NvlinkMetrics& g : out) {
    g.tx_bytes /= recorded;
    g.rx_bytes /= recorded;
    g.tx_utilization /= recorded;
    g.rx_utilization /= recorded;
  }
  return out;
}

SystemSummary summarize_system(const SystemResult& result, std::size_t index, MetricTable metrics) {
  SystemSummary s;
  s.index = index;
  s.label = result.system.label;
  s.strategy = result.system.name;
  // The strategy's registration says whether it is a baseline; an unregistered name is none (no speed-up
  // is claimed against a system the catalog does not know).
  const SystemInfo* info = find_system(result.system.name);
  s.is_baseline = info != nullptr && info->baseline;
  s.iterations = static_cast<int>(result.iterations.size());
  for (const MetricInfo& m : metrics) s.figures.push_back({.info = &m, .samples = {}, .aggregates = {}});
  for (const IterationResult& it : result.iterations) {
    for (const plan::OomReport& oom : it.oom)
      s.oom.push_back(fmt::format("iteration {}: {}", it.iteration, oom.str()));
    s.verification_problems += static_cast<int>(it.verification.size());
    for (const std::string& problem : it.verification) {
      if (s.verification.size() < verification_lines_kept)
        s.verification.push_back(fmt::format("iteration {}: {}", it.iteration, problem));
    }
    const IterationFigures figures = iteration_figures(it);
    for (FigureSeries& f : s.figures) {
      if (const std::optional<double> value = f.info->value(figures)) f.samples.push_back(*value);
    }
    if (!it.feasible) continue;
    ++s.feasible_iterations;
    s.per_iteration.push_back(it.metrics);
  }
  for (FigureSeries& f : s.figures) f.aggregates = aggregate(f.samples);
  double ratios = 0;
  for (const RunMetrics& m : s.per_iteration) {
    if (m.simulation_ratio <= 0) continue;
    ratios += 1;
    s.simulated_layers_seconds += m.simulated_layers_seconds;
    s.measured_layers_seconds += m.layers_seconds;
  }
  if (ratios > 0) {
    s.simulated_layers_seconds /= ratios;
    s.measured_layers_seconds /= ratios;
  }
  if (result.has_trace) s.stand_in = result.first_trace.stand_in;
  s.critical_rank = mean_breakdown(s.per_iteration, &RunMetrics::critical_rank_breakdown);
  s.mean_rank = mean_breakdown(s.per_iteration, &RunMetrics::mean_breakdown);
  s.nics = mean_nics(s.per_iteration);
  s.nvlinks = mean_nvlinks(s.per_iteration);
  s.resolved_options = system_resolved_options(result);
  s.resolved_options_text = resolved_options_text(result.system, s.resolved_options);
  s.layout_per_iteration = layout_per_iteration(result);
  s.layouts = count_layouts(result);
  return s;
}

bool names_best_baseline(const GateSpec& gate) {
  return gate.baseline == best_baseline_keyword;
}

// The label a gate compares against: as written, or the best baseline's for "best" (empty when none).
std::string gate_baseline(const RunSummary& summary, const GateSpec& gate) {
  if (!names_best_baseline(gate)) return gate.baseline;
  return summary.best_baseline.value_or("");
}

std::string gate_description(const RunSummary& summary, const GateSpec& gate) {
  std::string bounds;
  if (gate.min) bounds += fmt::format(" \u2265 {}", *gate.min);
  if (gate.min && gate.max) bounds += " and";
  if (gate.max) bounds += fmt::format(" \u2264 {}", *gate.max);
  if (gate.baseline.empty()) return fmt::format("{} of {}{}", gate.metric, gate.system, bounds);
  if (names_best_baseline(gate)) {
    return fmt::format("{} of {} vs the best baseline ({}){}", gate.metric, gate.system,
                       summary.best_baseline.value_or("none"), bounds);
  }
  return fmt::format("{} of {} vs {}{}", gate.metric, gate.system, gate.baseline, bounds);
}

// The first system a gate reads that ran out of memory in some iteration, or null. An OOM is a failure of
// the system on that workload, not a missing sample: a gate over the iterations that happened to fit would
// pass a system that cannot train on the data.
const SystemSummary* out_of_memory_system(const RunSummary& summary, const GateSpec& gate) {
  for (const std::string& label : {gate.system, gate_baseline(summary, gate)}) {
    const SystemSummary* system = label.empty() ? nullptr : summary.find(label);
    if (system != nullptr && system->feasible_iterations < system->iterations) return system;
  }
  return nullptr;
}

GateResult evaluate_gate(const RunSummary& summary, const GateSpec& gate) {
  GateResult result;
  result.gate = gate;
  result.description = gate_description(summary, gate);
  result.baseline = gate_baseline(summary, gate);
  result.observed = gate_observed_value(summary, gate);
  if (const SystemSummary* oom = out_of_memory_system(summary, gate)) {
    result.reason = fmt::format("{} ran out of memory in {} of {} iterations", oom->label,
                                oom->iterations - oom->feasible_iterations, oom->iterations);
    return result;
  }
  if (names_best_baseline(gate) && !summary.best_baseline) {
    result.reason = "there is no best baseline: no baseline fitted in memory in every iteration";
    return result;
  }
  if (!result.observed) {
    result.reason = "no value: the system (or its baseline) is not in the run";
    return result;
  }
  const double value = *result.observed;
  if (gate.min && !(value >= *gate.min)) {
    result.reason = fmt::format("observed {:.4g} is below the minimum {}", value, *gate.min);
  } else if (gate.max && !(value <= *gate.max)) {
    result.reason = fmt::format("observed {:.4g} is above the maximum {}", value, *gate.max);
  } else {
    result.passed = true;
  }
  return result;
}

}  // namespace

IterationFigures iteration_figures(const IterationResult& iteration) {
  return {.metrics = iteration.feasible ? &iteration.metrics : nullptr,
          .planner_seconds = iteration.planner_seconds,
          .predicted_seconds = iteration.predicted_seconds};
}

const FigureSeries& SystemSummary::figure(std::string_view name) const {
  for (const FigureSeries& f : figures) {
    if (f.info != nullptr && f.info->name == name) return f;
  }
  static const FigureSeries none;
  return none;
}

bool RunSummary::gates_passed() const {
  return std::all_of(gates.begin(), gates.end(), [](const GateResult& g) { return g.passed; });
}

const SystemSummary* RunSummary::find(const std::string& label) const {
  for (const SystemSummary& s : systems) {
    if (s.label == label) return &s;
  }
  return nullptr;
}

std::optional<double> RunSummary::speedup(const std::string& system, const std::string& baseline) const {
  for (const Speedup& s : speedups) {
    if (s.system == system && s.baseline == baseline) return s.value;
  }
  // Gates may name any pair, not only (system, baseline strategy) pairs listed in the tables.
  const SystemSummary* a = find(system);
  const SystemSummary* b = find(baseline);
  if (a == nullptr || b == nullptr || !a->fits_every_iteration() || !b->fits_every_iteration() ||
      a->aggregates(metric::iteration_seconds).mean <= 0) {
    return std::nullopt;
  }
  return b->aggregates(metric::iteration_seconds).mean / a->aggregates(metric::iteration_seconds).mean;
}

std::optional<double> gate_observed_value(const RunSummary& summary, const GateSpec& gate) {
  if (gate.metric == "speedup") {
    const std::string baseline = gate_baseline(summary, gate);
    if (baseline.empty()) return std::nullopt;
    return summary.speedup(gate.system, baseline);
  }
  const SystemSummary* system = summary.find(gate.system);
  if (system == nullptr || !system->feasible()) return std::nullopt;
  const MetricInfo* metric = find_gate_metric(summary.metrics, gate.metric);
  if (metric == nullptr) return std::nullopt;
  return system->aggregates(metric->name).mean;
}

RunSummary summarize_run(const RunResult& run, MetricTable metrics) {
  RunSummary summary;
  summary.metrics = metrics;
  summary.scenario = run.scenario.name;
  summary.seed = run.scenario.seed;
  summary.iterations = run.scenario.workload.iterations;
  summary.backend = run.backend;
  summary.simulated = is_simulated_backend(run.backend);
  summary.model = model_text(run.scenario.model);
  summary.cluster = cluster_text(run.scenario.cluster);
  summary.hardware_profile = profile_statement(run.scenario.hardware_profile);
  summary.planner_error = run.scenario.planner_error;
  summary.long_documents = run.long_documents;
  for (std::size_t i = 0; i < run.systems.size(); ++i) {
    const SystemResult& result = run.systems[i];
    summary.systems.push_back(summarize_system(result, i, metrics));
    if (result.has_trace && summary.backend_note.empty()) {
      summary.backend_note = result.first_trace.model_note;
      summary.simulator_version = result.first_trace.simulator_version;
    }
  }
  summary.baseline_ranking = rank_baselines(summary.systems);
  summary.best_baseline = best_baseline_of(summary.systems, summary.baseline_ranking);
  for (const SystemSummary& system : summary.systems) {
    for (const std::string& label : summary.baseline_ranking) {
      const SystemSummary& baseline = *summary.find(label);
      // Only on equal workloads: a system that ran out of memory in some iteration has no comparable mean.
      if (&system == &baseline || !system.fits_every_iteration() || !baseline.fits_every_iteration()) {
        continue;
      }
      const double time = system.aggregates(metric::iteration_seconds).mean;
      if (time <= 0) continue;
      summary.speedups.push_back(
          {system.label, baseline.label, baseline.aggregates(metric::iteration_seconds).mean / time});
    }
  }
  // After the list is complete: speedup() reads it (the best baseline against itself is 1 by the formula).
  for (SystemSummary& system : summary.systems) {
    if (summary.best_baseline) system.speedup_vs_best = summary.speedup(system.label, *summary.best_baseline);
  }
  for (const GateSpec& gate : run.scenario.gates) summary.gates.push_back(evaluate_gate(summary, gate));
  return summary;
}

}  // namespace zb::reports
