#include "reports/gbench_report.hpp"

#include <fmt/format.h>

#include "reports/atomic_write.hpp"

namespace zb::reports {
namespace {

constexpr double milliseconds_per_second = 1e3;

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

nlohmann::ordered_json entry(const std::string& name, const std::string& run_name, int family,
                             int repetitions, int iterations, double milliseconds) {
  nlohmann::ordered_json out;
  out["name"] = name;
  out["family_index"] = family;
  out["per_family_instance_index"] = 0;
  out["run_name"] = run_name;
  out["run_type"] = "iteration";
  out["repetitions"] = repetitions;
  out["repetition_index"] = 0;
  out["threads"] = 1;
  out["iterations"] = iterations;
  // Simulated or measured wall time of the distributed iteration; there is no separate CPU time.
  out["real_time"] = milliseconds;
  out["cpu_time"] = milliseconds;
  out["time_unit"] = "ms";
  return out;
}

nlohmann::ordered_json aggregate_entry(const std::string& run_name, int family, int repetitions,
                                       int iterations, const char* aggregate_name, double milliseconds) {
  nlohmann::ordered_json out =
      entry(run_name + "_" + aggregate_name, run_name, family, repetitions, iterations, milliseconds);
  out["run_type"] = "aggregate";
  out["aggregate_name"] = aggregate_name;
  out["aggregate_unit"] = "time";
  out.erase("repetition_index");
  return out;
}

// Google Benchmark's form for a benchmark that failed (State::SkipWithError): error_occurred and
// error_message, then the time of the iterations that ran. No aggregates follow it.
nlohmann::ordered_json out_of_memory_entry(const std::string& run_name, int family,
                                           const SystemSummary& system) {
  const SampleAggregates& time = system.iteration_time;
  nlohmann::ordered_json ran = entry(run_name, run_name, family, system.iterations, time.count,
                                     time.count > 0 ? time.mean * milliseconds_per_second : 0.0);
  nlohmann::ordered_json out;
  for (const char* key : {"name", "family_index", "per_family_instance_index", "run_name", "run_type",
                          "repetitions", "repetition_index", "threads"}) {
    out[key] = ran[key];
  }
  out["error_occurred"] = true;
  out["error_message"] =
      fmt::format("out of memory in {} of {} iterations{}", system.iterations - system.feasible_iterations,
                  system.iterations, system.oom.empty() ? "" : " (" + system.oom.front() + ")");
  for (const char* key : {"iterations", "real_time", "cpu_time", "time_unit"}) out[key] = ran[key];
  return out;
}

// Google Benchmark's label (State::SetLabel), last in an entry as it writes it: the layouts the system's
// plans ran, "layouts: hierarchical 9, hybrid-dp 1". The name stays the same whatever ran, so the
// benchmark history keeps one series per system; none for a system whose plans record no layout.
void add_layouts_label(nlohmann::ordered_json& entry, const SystemSummary& system) {
  if (!system.layouts.empty()) entry["label"] = "layouts: " + layouts_text(system.layouts);
}

}  // namespace

nlohmann::ordered_json gbench_json(const RunSummary& summary, const RunContext& context) {
  nlohmann::ordered_json out;
  out["context"] = gbench_context(summary, context);
  out["benchmarks"] = nlohmann::ordered_json::array();
  int family = 0;
  for (const SystemSummary& system : summary.systems) {
    const std::string run_name = summary.scenario + "/" + system.label + "/iteration_time";
    if (!system.fits_every_iteration()) {
      nlohmann::ordered_json failed = out_of_memory_entry(run_name, family++, system);
      add_layouts_label(failed, system);
      out["benchmarks"].push_back(std::move(failed));
      continue;
    }
    const SampleAggregates& time = system.iteration_time;
    const int n = time.count;
    nlohmann::ordered_json main =
        entry(run_name, run_name, family, n, n, time.mean * milliseconds_per_second);
    main["tokens_per_second"] = system.throughput.mean;
    main["mfu"] = system.mfu_aggregate.mean;
    main["tflops_per_gpu"] = system.tflops_per_gpu.mean;
    // The spread rides along as counters, not as _stddev/_cv entries: github-action-benchmark charts and
    // alerts on every entry's real_time, and a spread swings with the batches (a new seed can triple it)
    // where the code did not change at all.
    main["iteration_time_sd_ms"] = time.sd * milliseconds_per_second;
    main["iteration_time_cv"] = time.mean > 0 ? time.sd / time.mean : 0.0;
    add_layouts_label(main, system);
    out["benchmarks"].push_back(std::move(main));
    for (const auto& [aggregate_name, ms] : {std::pair{"mean", time.mean * milliseconds_per_second},
                                             std::pair{"median", time.median * milliseconds_per_second}}) {
      nlohmann::ordered_json aggregated = aggregate_entry(run_name, family, n, n, aggregate_name, ms);
      add_layouts_label(aggregated, system);
      out["benchmarks"].push_back(std::move(aggregated));
    }
    ++family;
  }
  return out;
}

void write_gbench_report(const RunSummary& summary, const RunContext& context,
                         const std::filesystem::path& path) {
  write_file_atomically(
      path,
      gbench_json(summary, context).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) +
          "\n");
}

}  // namespace zb::reports
