#include "reports/gbench_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "reports/atomic_write.hpp"

namespace zb::reports {
namespace {

constexpr double milliseconds_per_second = 1e3;
constexpr double not_a_number = std::numeric_limits<double>::quiet_NaN();

nlohmann::ordered_json gbench_context(const RunSummary& summary, const RunContext& context) {
  nlohmann::ordered_json out;
  out["date"] = context.date_utc;
  out["host_name"] = context.host.name;
  out["executable"] = "zeppelin-bench";
  out["num_cpus"] = context.host.logical_cpus;
  out["mhz_per_cpu"] = 0;
  out["cpu_scaling_enabled"] = false;
  out["caches"] = nlohmann::ordered_json::array();
  out["load_avg"] = nlohmann::ordered_json::array();
  out["library_build_type"] = context.build_type == "Debug" ? "debug" : "release";
  out["json_schema_version"] = 1;
  // Free-form keys, as --benchmark_context=key=value adds them (strings): what a history point needs to
  // be told apart from another (the revision, whether it was dirty, the seed and size of the workload).
  out["zeppelin_bench_version"] = context.tool_version;
  out["git_sha"] = context.git_sha;
  out["git_dirty"] = context.git_dirty ? "true" : "false";
  out["scenario"] = summary.scenario;
  out["backend"] = context.backend;
  out["simulated"] = context.simulated ? "true" : "false";
  out["seed"] = std::to_string(summary.seed);
  out["iterations"] = std::to_string(summary.iterations);
  return out;
}

// The keys Google Benchmark's JSON reporter writes first, in its order (src/json_reporter.cc).
nlohmann::ordered_json head(const std::string& name, const std::string& run_name, int family,
                            const char* run_type, int repetitions) {
  nlohmann::ordered_json out;
  out["name"] = name;
  out["family_index"] = family;
  out["per_family_instance_index"] = 0;
  out["run_name"] = run_name;
  out["run_type"] = run_type;
  out["repetitions"] = repetitions;
  return out;
}

// Simulated or measured wall time of the distributed iteration; there is no separate CPU time.
void add_times(nlohmann::ordered_json& entry, int iterations, double milliseconds) {
  entry["iterations"] = iterations;
  entry["real_time"] = milliseconds;
  entry["cpu_time"] = milliseconds;
  entry["time_unit"] = "ms";
}

// Google Benchmark's label (State::SetLabel), last in an entry as it writes it: the layouts the system's
// plans ran, "layouts: hierarchical 9, hybrid-dp 1". The name stays the same whatever ran, so the
// benchmark history keeps one series per system; none for a system whose plans record no layout.
void add_layouts_label(nlohmann::ordered_json& entry, const SystemSummary& system) {
  if (!system.layouts.empty()) entry["label"] = "layouts: " + layouts_text(system.layouts);
}

// The metric table's gbench counters (MetricInfo::gbench_counter), in their gbench order.
std::vector<const MetricInfo*> counters(MetricTable metrics) {
  std::vector<const MetricInfo*> out;
  for (const MetricInfo& m : metrics) {
    if (!m.gbench_counter.empty()) out.push_back(&m);
  }
  std::stable_sort(out.begin(), out.end(), [](const MetricInfo* a, const MetricInfo* b) {
    return a->gbench_position < b->gbench_position;
  });
  return out;
}

// One repetition as Google Benchmark writes it under --benchmark_repetitions: here one training iteration
// (`iterations` 1) and its time, with that iteration's counters.
nlohmann::ordered_json iteration_entry(const std::string& run_name, int family, const SystemSummary& system,
                                       MetricTable metrics, std::size_t i) {
  nlohmann::ordered_json out = head(run_name, run_name, family, "iteration", system.iterations);
  out["repetition_index"] = static_cast<int>(i);
  out["threads"] = 1;
  add_times(out, 1, system.samples(metric::iteration_seconds)[i] * milliseconds_per_second);
  const IterationFigures figures{.metrics = &system.per_iteration[i]};
  for (const MetricInfo* counter : counters(metrics)) {
    const std::optional<double> value = counter->value(figures);
    out[std::string(counter->gbench_counter)] = value ? *value : not_a_number;
  }
  return out;
}

// An aggregate over the repetitions, as Google Benchmark computes it (src/statistics.cc): `iterations` the
// number of repetitions, no repetition_index, each user counter under the same statistic.
nlohmann::ordered_json aggregate_entry(const std::string& run_name, int family, const SystemSummary& system,
                                       MetricTable metrics, const char* aggregate_name,
                                       double SampleAggregates::*statistic) {
  nlohmann::ordered_json out =
      head(run_name + "_" + aggregate_name, run_name, family, "aggregate", system.iterations);
  out["threads"] = 1;
  out["aggregate_name"] = aggregate_name;
  out["aggregate_unit"] = "time";
  add_times(out, system.iterations,
            system.aggregates(metric::iteration_seconds).*statistic * milliseconds_per_second);
  for (const MetricInfo* counter : counters(metrics))
    out[std::string(counter->gbench_counter)] = system.aggregates(counter->name).*statistic;
  return out;
}

// The OOM report of each iteration that ran out of memory, by iteration number: summary.cpp writes every
// line as "iteration N: <report>" (the first report kept per iteration).
std::map<int, std::string> oom_by_iteration(const SystemSummary& system) {
  std::map<int, std::string> out;
  constexpr std::string_view prefix = "iteration ";
  for (const std::string& line : system.oom) {
    if (line.rfind(prefix, 0) != 0) continue;
    char* end = nullptr;
    const long number = std::strtol(line.c_str() + prefix.size(), &end, 10);
    if (end == line.c_str() + prefix.size() || std::string_view(end).rfind(": ", 0) != 0) continue;
    out.emplace(static_cast<int>(number), std::string(end + 2));
  }
  return out;
}

// A system that ran out of memory in any iteration failed the workload (docs/METRICS.md, "Report figures"),
// so every repetition of it is an error entry, as Google Benchmark writes a run that failed
// (State::SkipWithError: error_occurred and error_message after threads), and no aggregates follow. Its
// times are NaN, as Google Benchmark writes a number that is not one: compare.py and
// github-action-benchmark read only the times (neither looks at error_occurred), and any number would be
// read as a measurement: 0 as a 100 % speed-up (compare.py's −1.0000), the fitted iterations' times as
// normal rows. NaN prints as "nan" in every compare.py column (and its U test), and the action refuses the
// file. docs/REPORT_FORMAT.md, "gbench.json", says why in full.
void add_error_entries(nlohmann::ordered_json& benchmarks, const std::string& run_name, int family,
                       const SystemSummary& system) {
  const int oom_iterations = system.iterations - system.feasible_iterations;
  const std::map<int, std::string> oom = oom_by_iteration(system);
  // Which entries fitted is known when every OOM iteration has its report line; otherwise each entry says
  // only what holds for the system.
  const bool per_iteration = static_cast<int>(oom.size()) == oom_iterations &&
                             oom.upper_bound(system.iterations - 1) == oom.end() &&
                             system.samples(metric::iteration_seconds).size() ==
                                 static_cast<std::size_t>(system.feasible_iterations);
  const std::string share =
      fmt::format("out of memory in {} of {} iterations", oom_iterations, system.iterations);
  std::size_t fitted = 0;
  for (int i = 0; i < system.iterations; ++i) {
    nlohmann::ordered_json out = head(run_name, run_name, family, "iteration", system.iterations);
    out["repetition_index"] = i;
    out["threads"] = 1;
    out["error_occurred"] = true;
    int ran = 0;
    if (!per_iteration) {
      out["error_message"] = share + (system.oom.empty() ? "" : " (" + system.oom.front() + ")");
    } else if (const auto it = oom.find(i); it != oom.end()) {
      out["error_message"] = fmt::format("{}, this one: {}", share, it->second);
    } else {
      ran = 1;
      out["error_message"] =
          fmt::format("{}, not this one ({:.6g} ms)", share,
                      system.samples(metric::iteration_seconds)[fitted++] * milliseconds_per_second);
    }
    add_times(out, ran, not_a_number);
    add_layouts_label(out, system);
    benchmarks.push_back(std::move(out));
  }
}

// nlohmann's dump(2), except for numbers that are not finite: it writes them as null, which compare.py
// cannot subtract; Google Benchmark writes NaN and Infinity (src/json_reporter.cc, FormatKV), which
// Python's json module reads.
void write_json(const nlohmann::ordered_json& value, int depth, std::string& out) {
  const auto indent = [&](int level) { out.append(static_cast<std::size_t>(2 * level), ' '); };
  if (value.is_object() && !value.empty()) {
    out += "{\n";
    std::size_t left = value.size();
    for (const auto& [key, item] : value.items()) {
      indent(depth + 1);
      out +=
          nlohmann::ordered_json(key).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
      out += ": ";
      write_json(item, depth + 1, out);
      out += --left > 0 ? ",\n" : "\n";
    }
    indent(depth);
    out += "}";
  } else if (value.is_array() && !value.empty()) {
    out += "[\n";
    std::size_t left = value.size();
    for (const auto& item : value) {
      indent(depth + 1);
      write_json(item, depth + 1, out);
      out += --left > 0 ? ",\n" : "\n";
    }
    indent(depth);
    out += "]";
  } else if (value.is_number_float() && !std::isfinite(value.get<double>())) {
    const double number = value.get<double>();
    out += std::isnan(number) ? "NaN" : number > 0 ? "Infinity" : "-Infinity";
  } else {
    out += value.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  }
}

}  // namespace

nlohmann::ordered_json gbench_json(const RunSummary& summary, const RunContext& context) {
  nlohmann::ordered_json out;
  out["context"] = gbench_context(summary, context);
  out["benchmarks"] = nlohmann::ordered_json::array();
  nlohmann::ordered_json& benchmarks = out["benchmarks"];
  int family = 0;
  for (const SystemSummary& system : summary.systems) {
    const std::string run_name = summary.scenario + "/" + system.label + "/iteration_time";
    if (!system.fits_every_iteration()) {
      add_error_entries(benchmarks, run_name, family++, system);
      continue;
    }
    for (std::size_t i = 0; i < system.samples(metric::iteration_seconds).size(); ++i) {
      nlohmann::ordered_json entry = iteration_entry(run_name, family, system, summary.metrics, i);
      add_layouts_label(entry, system);
      benchmarks.push_back(std::move(entry));
    }
    // No _stddev or _cv entries: github-action-benchmark charts and alerts on every entry's real_time, and
    // a spread swings with the batches (a new seed can triple it) where the code did not change at all.
    // The spread is in the iteration entries, which compare.py's U test reads.
    for (const auto& [aggregate_name, statistic] :
         {std::pair{"mean", &SampleAggregates::mean}, std::pair{"median", &SampleAggregates::median}}) {
      nlohmann::ordered_json aggregated =
          aggregate_entry(run_name, family, system, summary.metrics, aggregate_name, statistic);
      add_layouts_label(aggregated, system);
      benchmarks.push_back(std::move(aggregated));
    }
    ++family;
  }
  return out;
}

std::string gbench_text(const nlohmann::ordered_json& gbench) {
  std::string out;
  write_json(gbench, 0, out);
  out += "\n";
  return out;
}

void write_gbench_report(const RunSummary& summary, const RunContext& context,
                         const std::filesystem::path& path) {
  write_file_atomically(path, gbench_text(gbench_json(summary, context)));
}

}  // namespace zb::reports
