// Structure of the Perfetto trace and of the Google Benchmark JSON (what ui.perfetto.dev and
// github-action-benchmark's "googlecpp" reader rely on).
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "reports/gbench_report.hpp"
#include "reports/perfetto_trace.hpp"
#include "tests/unit/reports/sample_run.hpp"

namespace zb::reports {
namespace {

TEST(PerfettoTrace, OneTrackPerRankAndKindCountersPerNic) {
  const RunResult run = test::sample_run();
  const Trace& trace = run.systems[0].first_trace;
  const nlohmann::ordered_json json = perfetto_trace_json(trace, {"sample", "zeppelin"});
  ASSERT_TRUE(json["traceEvents"].is_array());
  EXPECT_EQ(json["displayTimeUnit"], "ns");
  EXPECT_EQ(json["otherData"]["system"], "zeppelin");

  std::set<std::string> thread_names, process_names, counters;
  std::set<std::pair<int, int>> tracks_with_events;
  int complete = 0;
  for (const auto& event : json["traceEvents"]) {
    const std::string phase = event["ph"];
    ASSERT_TRUE(event.contains("pid"));
    if (phase == "M" && event["name"] == "thread_name")
      thread_names.insert(event["args"]["name"].get<std::string>());
    if (phase == "M" && event["name"] == "process_name")
      process_names.insert(event["args"]["name"].get<std::string>());
    if (phase == "X") {
      ++complete;
      EXPECT_GE(event["dur"].get<double>(), 0.0);
      EXPECT_GE(event["ts"].get<double>(), 0.0);
      tracks_with_events.insert({event["pid"].get<int>(), event["tid"].get<int>()});
    }
    if (phase == "C") {
      counters.insert(event["name"].get<std::string>());
      EXPECT_TRUE(event["args"].contains("Gbit/s"));
    }
  }
  EXPECT_EQ(complete,
            static_cast<int>(trace.events.size()) + 2);  // + the forward and backward layer of the time axis
  EXPECT_EQ(process_names, (std::set<std::string>{"node 0", "node 1", "time axis: one representative layer",
                                                  "node 0 \u00b7 NICs", "node 1 \u00b7 NICs"}));
  // Tracks that hold slices: compute and send per rank, relay on ranks 0 and 4, and the time axis.
  EXPECT_EQ(thread_names.size(), 8U * 2U + 2U + 1U);
  EXPECT_TRUE(thread_names.count("rank 5 \u00b7 send"));
  EXPECT_EQ(counters.size(), 8U);  // 2 nodes × 2 NICs × tx/rx
  EXPECT_TRUE(counters.count("n1-nic0-rx"));
  // Events of different streams never share a track (Perfetto mis-draws overlapping slices on one track).
  EXPECT_EQ(tracks_with_events.size(), thread_names.size());
}

TEST(PerfettoTrace, TimesAreMicroseconds) {
  const RunResult run = test::sample_run();
  const Trace& trace = run.systems[0].first_trace;
  const nlohmann::ordered_json json = perfetto_trace_json(trace, {"sample", "zeppelin"});
  for (const auto& event : json["traceEvents"]) {
    if (event["ph"] != "X") continue;
    // Within a nanosecond: the writer rounds times to whole ns (reports/trace_tracks.hpp).
    EXPECT_NEAR(event["dur"].get<double>(), (trace.events[0].end - trace.events[0].start) * 1e6, 1e-3);
    break;
  }
}

TEST(PerfettoTrace, EachRanksCudaStreamIsATrackOfSlicesMeasuredByCupti) {
  const RunResult run = test::sample_run();
  Trace trace = run.systems[0].first_trace;  // 2 nodes of 4 GPUs
  const auto activity = [](int rank, std::uint32_t stream, DeviceActivityKind kind, double start,
                           double end) {
    DeviceActivity a;
    a.rank = rank;
    a.cuda_stream = stream;
    a.kind = kind;
    a.name = kind == DeviceActivityKind::nccl_kernel ? "ncclDevKernel_SendRecv()" : "attn_block()";
    a.start = start;
    a.end = end;
    return a;
  };
  trace.device_activity = {activity(0, 13, DeviceActivityKind::kernel, 1e-6, 3e-6),
                           activity(0, 13, DeviceActivityKind::kernel, 2e-6, 4e-6),  // overlaps the first
                           activity(0, 14, DeviceActivityKind::nccl_kernel, 1e-6, 5e-6),
                           activity(5, 13, DeviceActivityKind::kernel, 2e-6, 6e-6)};
  const nlohmann::ordered_json json = perfetto_trace_json(trace, {"sample", "cuda"});
  std::map<std::pair<int, int>, std::string> track_names;  // (pid, tid) → name
  std::map<std::string, std::vector<const nlohmann::ordered_json*>> slices_by_track;
  for (const auto& event : json["traceEvents"])
    if (event["ph"] == "M" && event["name"] == "thread_name")
      track_names[{event["pid"].get<int>(), event["tid"].get<int>()}] = event["args"]["name"];
  std::set<int> tids;
  for (const auto& [track, name] : track_names) EXPECT_TRUE(tids.insert(track.second).second) << name;
  for (const auto& event : json["traceEvents"]) {
    if (event["ph"] != "X" || event["cat"].get<std::string>().rfind("cupti ", 0) != 0) continue;
    EXPECT_EQ(event["args"]["source"], "measured (CUPTI)");
    slices_by_track[track_names.at({event["pid"].get<int>(), event["tid"].get<int>()})].push_back(&event);
  }
  ASSERT_EQ(slices_by_track.size(), 4U);
  ASSERT_EQ(slices_by_track["rank 0 \u00b7 cuda stream 13"].size(), 1U);
  ASSERT_EQ(slices_by_track["rank 0 \u00b7 cuda stream 13 (2)"].size(),
            1U);  // the overlapping one, a lane below
  const auto& nccl = *slices_by_track["rank 0 \u00b7 cuda stream 14"].at(0);
  EXPECT_EQ(nccl["cat"], "cupti nccl kernel");
  EXPECT_EQ(nccl["pid"], 1);  // node 0's process
  EXPECT_NEAR(nccl["dur"].get<double>(), 4.0, 1e-9);
  const auto& on_node_1 = *slices_by_track["rank 5 \u00b7 cuda stream 13"].at(0);
  EXPECT_EQ(on_node_1["pid"], 2);
  EXPECT_EQ(on_node_1["name"], "attn_block()");
}

std::vector<std::string> keys_of(const nlohmann::ordered_json& entry) {
  std::vector<std::string> keys;
  for (const auto& item : entry.items()) keys.push_back(item.key());
  return keys;
}

// As Google Benchmark writes a benchmark run with --benchmark_repetitions=N (src/json_reporter.cc,
// src/statistics.cc): N "iteration" entries, then the aggregates, so compare.py's U test has its samples.
TEST(GbenchReport, OneEntryPerIterationThenTheAggregatesAsGoogleBenchmarkRepetitions) {
  const RunResult run = test::sample_run();
  const RunSummary summary = summarize_run(run);
  const nlohmann::ordered_json json = gbench_json(summary, test::fixed_context());
  EXPECT_EQ(json["context"]["json_schema_version"], 1);
  EXPECT_EQ(json["context"]["host_name"], "test-host");
  EXPECT_EQ(json["context"]["num_cpus"], 8);  // the host facts of the report, not a second reading
  const auto& benchmarks = json["benchmarks"];
  // Two systems that fitted: 3 iterations + mean, median each; the OOM one: 3 error entries.
  ASSERT_EQ(benchmarks.size(), 2U * (3U + 2U) + 3U);
  const SystemSummary& zeppelin = summary.systems[0];
  const double times[] = {1.0, 1.026, 1.052};  // sample_run's zeppelin iterations, in s
  for (int i = 0; i < 3; ++i) {
    const auto& entry = benchmarks[static_cast<std::size_t>(i)];
    EXPECT_EQ(entry["name"], "sample/zeppelin/iteration_time");
    EXPECT_EQ(entry["run_name"], "sample/zeppelin/iteration_time");
    EXPECT_EQ(entry["family_index"], 0);
    EXPECT_EQ(entry["per_family_instance_index"], 0);
    EXPECT_EQ(entry["run_type"], "iteration");
    EXPECT_EQ(entry["repetitions"], 3);
    EXPECT_EQ(entry["repetition_index"], i);
    EXPECT_EQ(entry["threads"], 1);
    EXPECT_EQ(entry["iterations"], 1);  // one training iteration per repetition
    EXPECT_NEAR(entry["real_time"].get<double>(), 1e3 * times[i], 1e-9);
    EXPECT_EQ(entry["cpu_time"], entry["real_time"]);
    EXPECT_EQ(entry["time_unit"], "ms");
    EXPECT_EQ(entry["tokens_per_second"],
              zeppelin.samples(metric::tokens_per_second)[static_cast<std::size_t>(i)]);
    EXPECT_EQ(entry["mfu"], zeppelin.samples(metric::mfu)[static_cast<std::size_t>(i)]);
    EXPECT_EQ(entry["tflops_per_gpu"],
              zeppelin.per_iteration[static_cast<std::size_t>(i)].model_tflops_per_gpu);
    EXPECT_FALSE(entry.contains("error_occurred"));
  }
  EXPECT_EQ(keys_of(benchmarks[0]),
            (std::vector<std::string>{"name", "family_index", "per_family_instance_index", "run_name",
                                      "run_type", "repetitions", "repetition_index", "threads", "iterations",
                                      "real_time", "cpu_time", "time_unit", "tokens_per_second", "mfu",
                                      "tflops_per_gpu", "label"}));
  const auto& mean = benchmarks[3];
  EXPECT_EQ(mean["name"], "sample/zeppelin/iteration_time_mean");
  EXPECT_EQ(mean["run_name"], "sample/zeppelin/iteration_time");
  EXPECT_EQ(mean["run_type"], "aggregate");
  EXPECT_EQ(mean["aggregate_name"], "mean");
  EXPECT_EQ(mean["aggregate_unit"], "time");
  EXPECT_FALSE(mean.contains("repetition_index"));
  EXPECT_EQ(mean["iterations"], 3);  // the number of repetitions, as src/statistics.cc counts them
  EXPECT_NEAR(mean["real_time"].get<double>(), 1e3 * (1.0 + 1.026 + 1.052) / 3, 1e-9);
  EXPECT_EQ(mean["tokens_per_second"],
            zeppelin.aggregates(metric::tokens_per_second).mean);  // counters under the same statistic
  EXPECT_EQ(keys_of(mean),
            (std::vector<std::string>{"name", "family_index", "per_family_instance_index", "run_name",
                                      "run_type", "repetitions", "threads", "aggregate_name",
                                      "aggregate_unit", "iterations", "real_time", "cpu_time", "time_unit",
                                      "tokens_per_second", "mfu", "tflops_per_gpu", "label"}));
  const auto& median = benchmarks[4];
  EXPECT_EQ(median["aggregate_name"], "median");
  EXPECT_NEAR(median["real_time"].get<double>(), 1e3 * 1.026, 1e-9);
  EXPECT_EQ(median["mfu"], zeppelin.aggregates(metric::mfu).median);
  EXPECT_EQ(benchmarks[5]["name"], "sample/ring-cp/iteration_time");
  EXPECT_EQ(benchmarks[5]["family_index"], 1);
  EXPECT_EQ(benchmarks[9]["name"], "sample/ring-cp/iteration_time_median");
  for (std::size_t i = 10; i < 13; ++i) {
    EXPECT_EQ(benchmarks[i]["name"], "sample/uniform-cp/iteration_time");
    EXPECT_EQ(benchmarks[i]["error_occurred"], true);
  }
  for (const auto& b : benchmarks) {
    EXPECT_TRUE(b["real_time"].is_number());  // github-action-benchmark reads real_time + time_unit
    EXPECT_TRUE(b["name"].is_string());
    // No spread entries: github-action-benchmark alerts on every entry's real_time.
    EXPECT_EQ(b["name"].get<std::string>().find("_stddev"), std::string::npos);
    EXPECT_EQ(b["name"].get<std::string>().find("_cv"), std::string::npos);
  }
}

// The file is nlohmann's dump(2) with NaN written as Google Benchmark writes it (null would stop compare.py).
TEST(GbenchReport, TextIsTheJsonWithNanAsGoogleBenchmarkWritesIt) {
  RunResult run = test::sample_run();
  run.systems.pop_back();  // without the OOM system: nothing but finite numbers
  const nlohmann::ordered_json finite = gbench_json(summarize_run(run), test::fixed_context());
  EXPECT_EQ(gbench_text(finite), finite.dump(2) + "\n");

  const nlohmann::ordered_json with_oom =
      gbench_json(summarize_run(test::sample_run()), test::fixed_context());
  const std::string text = gbench_text(with_oom);
  EXPECT_NE(text.find("\"real_time\": NaN,\n"), std::string::npos);
  EXPECT_NE(text.find("\"cpu_time\": NaN,\n"), std::string::npos);
  EXPECT_EQ(text.find("null"), std::string::npos);
  std::string as_null = with_oom.dump(2) + "\n";  // the same text but for NaN where nlohmann writes null
  for (std::size_t at = 0; (at = as_null.find("null", at)) != std::string::npos;)
    as_null.replace(at, 4, "NaN");
  EXPECT_EQ(text, as_null);
}

}  // namespace
}  // namespace zb::reports
