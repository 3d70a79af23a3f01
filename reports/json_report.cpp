#include "reports/json_report.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "reports/atomic_write.hpp"
#include "reports/layouts.hpp"
#include "reports/long_documents_report.hpp"
#include "reports/profile_report.hpp"
#include "reports/resolved_options.hpp"

namespace zb::reports {
namespace {

using ojson = nlohmann::ordered_json;

// No sample, no figure: a system that never fitted has null aggregates, never a 0 s "measurement".
ojson aggregates_json(const SampleAggregates& a) {
  auto figure = [&](double value) { return a.count > 0 ? ojson(value) : ojson(); };
  return ojson{{"count", a.count},     {"mean", figure(a.mean)}, {"sd", figure(a.sd)},
               {"min", figure(a.min)}, {"max", figure(a.max)},   {"median", figure(a.median)}};
}

ojson breakdown_json(const TimeBreakdown& b) {
  return ojson{{"attention_seconds", b.attention},
               {"linear_seconds", b.linear},
               {"remap_seconds", b.remap},
               {"tensor_parallel_seconds", b.tensor_parallel},
               {"exposed_communication_seconds", b.exposed_communication},
               {"idle_seconds", b.idle},
               {"embedding_and_head_seconds", b.embedding_and_head},
               {"gradient_sync_exposed_seconds", b.gradient_sync_exposed},
               {"optimizer_seconds", b.optimizer}};
}

ojson nics_json(const std::vector<NicMetrics>& nics) {
  ojson out = ojson::array();
  for (const NicMetrics& nic : nics) {
    out.push_back(ojson{
        {"node", nic.node},
        {"nic", nic.nic},
        {"bandwidth", nic.bandwidth},
        {"tx_bytes", nic.tx_bytes},
        {"rx_bytes", nic.rx_bytes},
        {"tx_utilization", nic.tx_utilization},
        {"rx_utilization", nic.rx_utilization},
        {"busy_share", nic.busy_share},
        {"source", nic.measured ? "measured" : "simulated"},
        {"expected_tx_bytes", nic.expected_tx_bytes >= 0 ? ojson(nic.expected_tx_bytes) : ojson(nullptr)},
        {"expected_rx_bytes", nic.expected_rx_bytes >= 0 ? ojson(nic.expected_rx_bytes) : ojson(nullptr)}});
  }
  return out;
}

ojson nvlinks_json(const std::vector<NvlinkMetrics>& gpus) {
  ojson out = ojson::array();
  for (const NvlinkMetrics& g : gpus) {
    out.push_back(ojson{{"node", g.node},
                        {"gpu", g.gpu},
                        {"bandwidth", g.bandwidth},
                        {"tx_bytes", g.tx_bytes},
                        {"rx_bytes", g.rx_bytes},
                        {"tx_utilization", g.tx_utilization},
                        {"rx_utilization", g.rx_utilization}});
  }
  return out;
}

// One iteration's figures: the metric table's, in its order (a name with '/' nests: iteration_parts), null
// where the iteration has none; then the critical rank and the breakdowns.
ojson figures_json(MetricTable metrics, const IterationResult& iteration) {
  ojson out;
  const IterationFigures figures = iteration_figures(iteration);
  for (const MetricInfo& metric : metrics) {
    if (!metric.in_iteration_metrics) continue;
    const std::optional<double> value = metric.value(figures);
    out[ojson::json_pointer("/" + std::string(metric.name))] = value ? ojson(*value) : ojson();
  }
  const RunMetrics& m = iteration.metrics;
  out["critical_rank"] = m.critical_rank;
  out["breakdown"] = ojson{{"critical_rank", breakdown_json(m.critical_rank_breakdown)},
                           {"mean_rank", breakdown_json(m.mean_breakdown)}};
  return out;
}

// The system's samples of every sampled figure, in table order.
ojson samples_json(const SystemSummary& s) {
  ojson out = ojson::object();
  for (const FigureSeries& f : s.figures) {
    if (f.info->sampled) out[std::string(f.info->name)] = f.samples;
  }
  return out;
}

// The section of a system's object ("aggregates", "balance", ...) a figure's aggregates go in; empty when
// none (MetricInfo::aggregates_at is "section/key").
std::string_view section_of(const MetricInfo& metric) {
  return metric.aggregates_at.substr(0, metric.aggregates_at.find('/'));
}

// One section of a system's object: the aggregates of every figure the table puts there, in table order.
ojson aggregates_section(const SystemSummary& s, std::string_view section) {
  ojson out = ojson::object();
  for (const FigureSeries& f : s.figures) {
    if (f.info->aggregates_at.empty() || section_of(*f.info) != section) continue;
    out[std::string(f.info->aggregates_at.substr(section.size() + 1))] = aggregates_json(f.aggregates);
  }
  return out;
}

// The sections of a system's object report.json has always had, in its order; the table's figures fill
// them, and a section the table names beyond these follows them (before "memory").
constexpr std::array<std::string_view, 5> known_sections{"aggregates", "balance", "nic", "nvlink",
                                                         "simulation"};

ojson oom_json(const IterationResult& iteration) {
  ojson out = ojson::array();
  for (const plan::OomReport& oom : iteration.oom) {
    out.push_back(ojson{{"iteration", iteration.iteration},
                        {"rank", oom.rank},
                        {"micro_batch", oom.micro_batch},
                        {"tokens_needed", oom.tokens_needed},
                        {"token_capacity", oom.token_capacity}});
  }
  return out;
}

ojson ring_steps_json(const SystemResult& result) {
  ojson out = ojson::array();
  if (!result.has_trace) return out;
  for (const RingStepStats& s : result.first_trace.ring_step_stats) {
    out.push_back(ojson{{"level", plan::to_string(s.level)},
                        {"pass", to_string(s.pass)},
                        {"count", s.count},
                        {"mean_seconds", s.mean_seconds},
                        {"p50_seconds", s.p50_seconds},
                        {"max_seconds", s.max_seconds}});
  }
  return out;
}

ojson iterations_json(const SystemResult& result, MetricTable metrics) {
  ojson out = ojson::array();
  for (const IterationResult& it : result.iterations) {
    ojson entry;
    entry["iteration"] = it.iteration;
    entry["feasible"] = it.feasible;
    entry["planner_seconds"] = it.planner_seconds;
    entry["resolved_options"] = iteration_resolved_options(result.system, it.plan_info);
    const std::optional<std::string> layout = iteration_layout(it.plan_info);
    entry["layout"] = layout ? ojson(*layout) : ojson();
    entry["predicted_seconds"] = it.feasible ? ojson(it.predicted_seconds) : ojson();
    // Beside planner_seconds, by the table's declaration (a table without it writes null).
    const MetricInfo* share_info = find_metric(metrics, metric::planner_share);
    const std::optional<double> share =
        share_info != nullptr ? share_info->value(iteration_figures(it)) : std::nullopt;
    entry["planner_share"] = share ? ojson(*share) : ojson();
    entry["metrics"] = it.feasible ? figures_json(metrics, it) : ojson();
    entry["oom"] = oom_json(it);
    entry["verification_problems"] = it.verification.size();
    out.push_back(std::move(entry));
  }
  return out;
}

ojson system_json(const SystemResult& result, const SystemSummary& s, MetricTable metrics) {
  ojson out;
  out["label"] = s.label;
  out["strategy"] = s.strategy;
  out["options"] = ojson::parse(result.system.options.dump());
  out["baseline"] = s.is_baseline;
  out["resolved_options"] = s.resolved_options;
  out["layouts"] = layouts_json(s.layouts);
  out["iterations"] = s.iterations;
  out["feasible_iterations"] = s.feasible_iterations;
  out["speedup_vs_best_baseline"] = s.speedup_vs_best ? ojson(*s.speedup_vs_best) : ojson();
  out["samples"] = samples_json(s);
  out["aggregates"] = aggregates_section(s, "aggregates");
  out["breakdown"] = s.feasible() ? ojson{{"critical_rank", breakdown_json(s.critical_rank)},
                                          {"mean_rank", breakdown_json(s.mean_rank)}}
                                  : ojson();
  out["balance"] = aggregates_section(s, "balance");
  out["nic"] = aggregates_section(s, "nic");
  out["nic"]["per_nic"] = nics_json(s.nics);
  out["nvlink"] = aggregates_section(s, "nvlink");
  out["nvlink"]["per_gpu"] = nvlinks_json(s.nvlinks);
  out["ring_steps"] = ring_steps_json(result);
  const bool simulated_too = s.aggregates(metric::simulation_ratio).count > 0;
  out["simulation"] = aggregates_section(s, "simulation");
  out["simulation"]["simulated_layers_seconds"] = simulated_too ? ojson(s.simulated_layers_seconds) : ojson();
  out["simulation"]["measured_layers_seconds"] = simulated_too ? ojson(s.measured_layers_seconds) : ojson();
  out["simulation"]["stand_in"] = s.stand_in.empty() ? ojson() : ojson(s.stand_in);
  for (const FigureSeries& f : s.figures) {
    const std::string_view section = section_of(*f.info);
    if (section.empty() || out.contains(std::string(section)) ||
        std::find(known_sections.begin(), known_sections.end(), section) != known_sections.end()) {
      continue;
    }
    out[std::string(section)] = aggregates_section(s, section);
  }
  ojson oom = ojson::array();
  for (const IterationResult& it : result.iterations) {
    for (ojson& entry : oom_json(it)) oom.push_back(std::move(entry));
  }
  out["memory"] = ojson{{"oom_iterations", s.iterations - s.feasible_iterations}, {"oom", std::move(oom)}};
  // verified/problems: plan::verify of every iteration's plan. executor_note: this system's own executor
  // account of its first feasible iteration (reference and cuda: what the numerics check covered,
  // forward and backward, and its errors; sim: how it was simulated), not the run-level backend_note,
  // which is the first system's.
  out["verification"] = ojson{{"verified", s.verification_problems == 0},
                              {"problems", s.verification_problems},
                              {"first_problems", s.verification},
                              {"executor_note", result.has_trace ? result.first_trace.model_note : ""}};
  out["per_iteration"] = iterations_json(result, metrics);
  return out;
}

ojson workload_json(const RunResult& run) {
  ojson batches = ojson::array();
  for (const BatchSummary& batch : run.workload.batches) {
    batches.push_back(
        ojson{{"iteration", batch.iteration},
              {"documents", batch.documents},
              {"tokens", batch.tokens},
              {"longest", batch.longest},
              {"lengths_fnv1a", lengths_fingerprint(batch.lengths_fnv1a)},
              {"above_capacity", iteration_long_documents_json(run.long_documents, batch.iteration)}});
  }
  return ojson{{"iterations", run.workload.batches.size()},
               {"capacity_tokens", capacity_tokens_json(run.long_documents)},
               {"above_capacity_mean", mean_long_documents_json(run.long_documents)},
               {"batches", std::move(batches)}};
}

// The baseline every system is measured against first; null when no baseline fitted in every iteration.
ojson best_baseline_json(const RunSummary& summary) {
  const SystemSummary* best = summary.best_baseline ? summary.find(*summary.best_baseline) : nullptr;
  if (best == nullptr) return ojson();
  return ojson{{"label", best->label},
               {"strategy", best->strategy},
               {"iteration_seconds", best->aggregates(metric::iteration_seconds).mean}};
}

ojson gates_json(const RunSummary& summary) {
  ojson out = ojson::array();
  for (const GateResult& g : summary.gates) {
    out.push_back(ojson{{"metric", g.gate.metric},
                        {"system", g.gate.system},
                        {"baseline", g.gate.baseline.empty() ? ojson() : ojson(g.gate.baseline)},
                        // "best" as written above; here the label it stood for in this run.
                        {"resolved_baseline", g.baseline.empty() ? ojson() : ojson(g.baseline)},
                        {"min", g.gate.min ? ojson(*g.gate.min) : ojson()},
                        {"max", g.gate.max ? ojson(*g.gate.max) : ojson()},
                        {"observed", g.observed ? ojson(*g.observed) : ojson()},
                        {"passed", g.passed},
                        {"reason", g.reason}});
  }
  return out;
}

// The scenario file as written with every override written into it: run again without the flags, it
// reproduces the run.
ojson effective_scenario_json(const RunResult& run, const RunContext& context) {
  nlohmann::json scenario = run.scenario.source_json;
  for (const ScenarioOverride& o : context.overrides)
    scenario[nlohmann::json::json_pointer(o.json_pointer)] = o.value;
  return ojson::parse(scenario.dump());
}

ojson run_section(const RunResult& run, const RunSummary& summary, const RunContext& context) {
  ojson out;
  out["scenario"] = run.scenario.name;
  out["backend"] = run.backend;
  out["simulated"] = summary.simulated;
  out["seed"] = run.scenario.seed;
  out["planner_error"] = run.scenario.planner_error;
  out["iterations"] = run.scenario.workload.iterations;
  out["overrides"] = overrides_to_json(context.overrides);
  out["effective_scenario"] = effective_scenario_json(run, context);
  out["hardware_profile"] = profile_to_json(run.scenario.hardware_profile);
  // A plan file replaces the systems: the effective scenario alone does not reproduce such a run.
  out["plan_file"] = context.plan_file.empty() ? ojson() : ojson(context.plan_file);
  out["backend_note"] = summary.backend_note;
  out["simulator"] = summary.simulator_version;
  return out;
}

// Sets the value at `pointer` (with "*" wildcards over arrays) to null wherever it exists.
void null_out(ojson& node, std::string_view pointer) {
  if (pointer.empty()) {
    node = nullptr;
    return;
  }
  const std::size_t next = pointer.find('/', 1);
  const std::string key(
      pointer.substr(1, next == std::string_view::npos ? std::string_view::npos : next - 1));
  const std::string_view rest = next == std::string_view::npos ? std::string_view{} : pointer.substr(next);
  if (key == "*" && node.is_array()) {
    for (ojson& element : node) null_out(element, rest);
  } else if (node.is_object() && node.contains(key)) {
    null_out(node[key], rest);
  }
}

}  // namespace

ojson report_json(const RunResult& run, const RunSummary& summary, const RunContext& context) {
  ojson out;
  out["schema_version"] = report_schema_version;
  out["run"] = run_section(run, summary, context);
  out["provenance"] = provenance_to_json(context, run.scenario.source_file.string());
  out["scenario"] = ojson{{"name", summary.scenario},
                          {"model", summary.model},
                          {"cluster", summary.cluster},
                          {"passes", to_string(run.scenario.passes)}};
  out["verdict"] = ojson{{"gates_passed", summary.gates_passed()},
                         {"gates", summary.gates.size()},
                         {"gates_failed", std::count_if(summary.gates.begin(), summary.gates.end(),
                                                        [](const GateResult& g) { return !g.passed; })}};
  out["best_baseline"] = best_baseline_json(summary);
  out["baseline_ranking"] = summary.baseline_ranking;
  out["workload"] = workload_json(run);
  out["systems"] = ojson::array();
  for (std::size_t i = 0; i < run.systems.size() && i < summary.systems.size(); ++i) {
    out["systems"].push_back(system_json(run.systems[i], summary.systems[i], summary.metrics));
  }
  out["comparisons"] = ojson::array();
  for (const Speedup& s : summary.speedups) {
    out["comparisons"].push_back(ojson{{"system", s.system}, {"baseline", s.baseline}, {"speedup", s.value}});
  }
  out["gates"] = gates_json(summary);
  return out;
}

const std::vector<std::string>& volatile_report_fields() {
  static const std::vector<std::string> fields{"/provenance",
                                               "/systems/*/samples/planner_seconds",
                                               "/systems/*/aggregates/planner_seconds",
                                               "/systems/*/per_iteration/*/planner_seconds",
                                               "/systems/*/aggregates/planner_share",
                                               "/systems/*/per_iteration/*/planner_share"};
  return fields;
}

std::string lengths_fingerprint(std::uint64_t lengths_fnv1a) {
  return fmt::format("{:016x}", lengths_fnv1a);
}

ojson without_volatile_fields(ojson report) {
  for (const std::string& pointer : volatile_report_fields()) null_out(report, pointer);
  return report;
}

std::string dump_report(const ojson& report) {
  return report.dump(2, ' ', false, ojson::error_handler_t::replace) + "\n";
}

void write_json_report(const RunResult& run, const RunSummary& summary, const RunContext& context,
                       const std::filesystem::path& path) {
  write_file_atomically(path, dump_report(report_json(run, summary, context)));
}

}  // namespace zb::reports
