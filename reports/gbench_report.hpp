#pragma once
// `--format gbench`: the run in Google Benchmark's JSON form, so CI can chart and alert on it with
// github-action-benchmark (`tool: googlecpp`, which reads benchmarks[].name, real_time and time_unit) or
// compare two runs with Google Benchmark's tools/compare.py.
//
// Per system that fitted in every iteration: one "iteration" entry named "<scenario>/<system>/iteration_time"
// whose real_time is the mean iteration time in ms and `iterations` the number of iterations (Google
// Benchmark's own meaning: real_time is the mean over `iterations` runs), with tokens_per_second, mfu,
// tflops_per_gpu and the spread (iteration_time_sd_ms, iteration_time_cv) as user counters; then the
// aggregate entries _mean and _median. No _stddev or _cv entries: github-action-benchmark alerts on every
// entry's real_time, and a spread follows the batches, not the code. A system that ran out of memory in any
// iteration gets one entry with error_occurred and error_message, as Google Benchmark writes a benchmark
// that failed (its real_time: the mean of the iterations that fitted, 0 when none did).
// A system whose plans record their layout (reports/layouts.hpp) carries them in each entry's "label"
// ("layouts: hierarchical 9, hybrid-dp 1"), not in the name, which must stay one series per system.
#include <filesystem>

#include <nlohmann/json.hpp>

#include "reports/run_context.hpp"
#include "reports/summary.hpp"

namespace zb::reports {

[[nodiscard]] nlohmann::ordered_json gbench_json(const RunSummary& summary, const RunContext& context);

void write_gbench_report(const RunSummary& summary, const RunContext& context,
                         const std::filesystem::path& path);

}  // namespace zb::reports
