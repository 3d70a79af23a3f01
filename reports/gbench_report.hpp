#pragma once
// `--format gbench`: the run in Google Benchmark's JSON form, as a benchmark run with
// --benchmark_repetitions=N writes it, so Google Benchmark's tools/compare.py compares two runs (its
// Mann-Whitney U test, the `_pvalue` rows, needs the repetitions) and CI can chart it with
// github-action-benchmark (`tool: googlecpp`, which reads benchmarks[].name, real_time and time_unit).
//
// Per system that fitted in every iteration, named "<scenario>/<system>/iteration_time": one
// "iteration" entry per training iteration (repetition_index i of `repetitions` N, `iterations` 1,
// real_time = cpu_time = that iteration's time in ms, and its tokens_per_second, mfu and tflops_per_gpu
// as user counters), then the aggregates _mean and _median over them (`iterations` N, each counter under
// the same statistic), as src/statistics.cc computes them. No _stddev or _cv entries: github-action-
// benchmark alerts on every entry's real_time, and a spread follows the batches, not the code.
// A system that ran out of memory in any iteration failed the workload: each of its N entries has
// error_occurred and error_message, as Google Benchmark writes a failed run, and real_time = cpu_time =
// NaN (written `NaN`, as Google Benchmark writes a number that is not one); no aggregates. Neither
// compare.py nor the action reads error_occurred, so NaN is what keeps it from passing for a time:
// compare.py prints "nan" on each of its rows, never a normal row or −1.0000, and the action refuses
// the file (docs/REPORT_FORMAT.md, "gbench.json").
// A system whose plans record their layout (reports/layouts.hpp) carries them in each entry's "label"
// ("layouts: hierarchical 9, hybrid-dp 1"), not in the name, which must stay one series per system.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "reports/run_context.hpp"
#include "reports/summary.hpp"

namespace zb::reports {

[[nodiscard]] nlohmann::ordered_json gbench_json(const RunSummary& summary, const RunContext& context);

// The file's text: nlohmann's dump(2), but NaN and ±Infinity as Google Benchmark writes them (`NaN`,
// `Infinity`), where nlohmann would write null (which compare.py cannot compute with).
[[nodiscard]] std::string gbench_text(const nlohmann::ordered_json& gbench);

void write_gbench_report(const RunSummary& summary, const RunContext& context,
                         const std::filesystem::path& path);

}  // namespace zb::reports
