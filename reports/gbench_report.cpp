#include "reports/gbench_report.hpp"

#include <thread>

#include "reports/atomic_write.hpp"

namespace zb::reports {
namespace {

constexpr double milliseconds_per_second = 1e3;

nlohmann::ordered_json gbench_context(const RunSummary& summary, const RunContext& context) {
  nlohmann::ordered_json out;
  out["date"] = context.date_utc;
  out["host_name"] = context.host;
  out["executable"] = "zeppelin-bench";
  out["num_cpus"] = std::thread::hardware_concurrency();
  out["mhz_per_cpu"] = 0;
  out["cpu_scaling_enabled"] = false;
  out["caches"] = nlohmann::ordered_json::array();
  out["load_avg"] = nlohmann::ordered_json::array();
  out["library_build_type"] = context.build_type == "Debug" ? "debug" : "release";
  out["json_schema_version"] = 1;
  // Free-form keys, as --benchmark_context=key=value adds them.
  out["zeppelin_bench_version"] = context.tool_version;
  out["git_sha"] = context.git_sha;
  out["scenario"] = summary.scenario;
  out["backend"] = context.backend;
  out["simulated"] = context.simulated ? "true" : "false";
  return out;
}

nlohmann::ordered_json entry(const std::string& name, const std::string& run_name, int family, int repetitions,
                             int iterations, double milliseconds) {
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

nlohmann::ordered_json aggregate_entry(const std::string& run_name, int family, int repetitions, int iterations,
                                       const char* aggregate_name, double value, bool is_percentage) {
  nlohmann::ordered_json out = entry(run_name + "_" + aggregate_name, run_name, family, repetitions, iterations, value);
  out["run_type"] = "aggregate";
  out["aggregate_name"] = aggregate_name;
  out["aggregate_unit"] = is_percentage ? "percentage" : "time";
  out.erase("repetition_index");
  return out;
}

}  // namespace

nlohmann::ordered_json gbench_json(const RunSummary& summary, const RunContext& context) {
  nlohmann::ordered_json out;
  out["context"] = gbench_context(summary, context);
  out["benchmarks"] = nlohmann::ordered_json::array();
  int family = 0;
  for (const SystemSummary& system : summary.systems) {
    if (!system.feasible()) continue;
    const std::string run_name = summary.scenario + "/" + system.label + "/iteration_time";
    const SampleAggregates& time = system.iteration_time;
    const int n = time.count;
    nlohmann::ordered_json main = entry(run_name, run_name, family, n, n, time.mean * milliseconds_per_second);
    main["tokens_per_second"] = system.throughput.mean;
    main["mfu"] = system.mfu_aggregate.mean;
    main["tflops_per_gpu"] = system.tflops_per_gpu.mean;
    out["benchmarks"].push_back(std::move(main));
    out["benchmarks"].push_back(aggregate_entry(run_name, family, n, n, "mean", time.mean * milliseconds_per_second, false));
    out["benchmarks"].push_back(aggregate_entry(run_name, family, n, n, "median", time.median * milliseconds_per_second, false));
    out["benchmarks"].push_back(aggregate_entry(run_name, family, n, n, "stddev", time.sd * milliseconds_per_second, false));
    // Google Benchmark writes the coefficient of variation as a fraction with aggregate_unit "percentage".
    out["benchmarks"].push_back(
        aggregate_entry(run_name, family, n, n, "cv", time.mean > 0 ? time.sd / time.mean : 0.0, true));
    ++family;
  }
  return out;
}

void write_gbench_report(const RunSummary& summary, const RunContext& context, const std::filesystem::path& path) {
  write_file_atomically(path, gbench_json(summary, context).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n");
}

}  // namespace zb::reports
