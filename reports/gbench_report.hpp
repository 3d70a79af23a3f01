#pragma once
// `--format gbench`: the run in Google Benchmark's JSON form, so CI can chart and alert on it with
// github-action-benchmark (`tool: googlecpp`, which reads benchmarks[].name, real_time and time_unit) or
// compare two runs with Google Benchmark's tools/compare.py.
//
// Per feasible system: one "iteration" entry named "<scenario>/<system>/iteration_time" whose real_time is
// the mean iteration time in ms and `iterations` the number of feasible iterations (Google Benchmark's own
// meaning: real_time is the mean over `iterations` runs), with tokens_per_second, mfu and
// tflops_per_gpu as user counters; then aggregate entries _mean, _median, _stddev and _cv, as
// --benchmark_repetitions writes them. Systems with no feasible iteration are left out: a missing point is
// safer for a trend chart than a fake one.
#include <filesystem>

#include <nlohmann/json.hpp>

#include "reports/run_context.hpp"
#include "reports/summary.hpp"

namespace zb::reports {

[[nodiscard]] nlohmann::ordered_json gbench_json(const RunSummary& summary, const RunContext& context);

void write_gbench_report(const RunSummary& summary, const RunContext& context, const std::filesystem::path& path);

}  // namespace zb::reports
