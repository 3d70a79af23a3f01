// The trace file as Perfetto's JSON importer and catapult read it (issue 37, item 7), on the sample run's
// trace; TraceViewers.* (trace_viewer_test.cpp) run the same checks on traces the CLI writes.
// perfetto_import_checks.hpp says, with the source files, what each viewer reads.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "reports/perfetto_trace.hpp"
#include "tests/unit/reports/perfetto_import_checks.hpp"
#include "tests/unit/reports/sample_run.hpp"

namespace zb::reports {
namespace {

using Json = nlohmann::json;

Json trace_json(const Trace& trace, const TraceLabels& labels) {
  return Json::parse(perfetto_trace_json(trace, labels).dump());
}

// The sample trace (2 nodes of 4 GPUs, 2 NICs each) with CUPTI's streams on ranks 0 and 5, so the device
// tracks are ordered too.
Trace trace_with_device_tracks() {
  Trace trace = test::sample_run().systems[0].first_trace;
  const auto activity = [](int rank, std::uint32_t stream) {
    DeviceActivity a;
    a.rank = rank;
    a.cuda_stream = stream;
    a.name = "attn_block()";
    a.start = 1e-6;
    a.end = 2e-6;
    return a;
  };
  trace.device_activity = {activity(0, 13), activity(0, 14), activity(5, 13)};
  return trace;
}

TEST(PerfettoImport, RunFactsAreInTheTopLevelMetadataObject) {
  const RunResult run = test::sample_run();
  const Json json = trace_json(run.systems[0].first_trace, {"sample", "zeppelin"});
  test::expect_run_facts_in_metadata(json, "sample", "zeppelin");
  const Json& metadata = json["metadata"];
  EXPECT_EQ(metadata["backend"], "sim");
  EXPECT_EQ(metadata["timing"], "simulated");
  EXPECT_EQ(metadata["simulator"], "SimGrid 3.32");
  EXPECT_EQ(metadata["layers"], 32);
  EXPECT_EQ(metadata["world_size"], 8);
  EXPECT_EQ(metadata["nodes"], 2);
  // otherData stays for readers that look there (catapult shows it beside metadata); Perfetto skips it.
  EXPECT_EQ(json["otherData"]["system"], "zeppelin");
}

// trace_labels(run, system) hands the scenario's hardware profile over: its source, and every value that
// differs from the defaults, as profile_statement words them in the other reports.
TEST(PerfettoImport, TheHardwareProfileIsInTheMetadata) {
  RunResult run = test::sample_run();
  const Json defaults = trace_json(run.systems[0].first_trace, trace_labels(run, "zeppelin"));
  test::expect_run_facts_in_metadata(defaults, "sample", "zeppelin");
  EXPECT_EQ(defaults["metadata"]["hardware_profile"], "defaults");

  run.scenario.hardware_profile.source = "profiles/h200.json";
  run.scenario.hardware_profile.profile.gemm_efficiency = 0.5;
  const Json json = trace_json(run.systems[0].first_trace, trace_labels(run, "zeppelin"));
  EXPECT_EQ(json["metadata"]["hardware_profile"], "profiles/h200.json: gemm_efficiency 0.5 (default 0.75)");
}

TEST(PerfettoImport, AMeasuredTraceSaysMeasured) {
  Trace trace = test::sample_run().systems[0].first_trace;
  trace.backend = "cuda";
  trace.simulator_version.clear();
  trace.model_note = "measured on NVIDIA H200 (cuda backend)";
  const Json json = trace_json(trace, {"sample", "zeppelin"});
  test::expect_run_facts_in_metadata(json, "sample", "zeppelin");
  EXPECT_EQ(json["metadata"]["timing"], "measured");
  EXPECT_FALSE(json["metadata"].contains("simulator"));  // never an empty string for a fact not there
  EXPECT_EQ(json["metadata"]["model"], "measured on NVIDIA H200 (cuda backend)");
}

TEST(PerfettoImport, MetadataEventsAreOnlyTheFourPerfettoKeeps) {
  const Json json = trace_json(trace_with_device_tracks(), {"sample", "zeppelin"});
  test::expect_only_metadata_events_perfetto_reads(json);
  // The time-axis note, which process_labels carried, is in what Perfetto shows: the process's name.
  std::set<std::string> process_names;
  for (const Json& e : json["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "process_name") process_names.insert(e["args"]["name"]);
  EXPECT_TRUE(process_names.count("time axis: one representative layer"));
}

TEST(PerfettoImport, EveryCounterEventHasAPidAndATid) {
  const Json json = trace_json(test::sample_run().systems[0].first_trace, {"sample", "zeppelin"});
  test::expect_counters_have_pid_and_tid(json);
}

TEST(PerfettoImport, RankTracksComeBeforeEveryNicCounterInRankOrder) {
  const Json json = trace_json(trace_with_device_tracks(), {"sample", "zeppelin"});
  test::expect_ranks_before_nic_counters(json);
}

// Each node's NIC counters are a process of their own, "node N · NICs", after every node's ranks: the
// first screen is the ranks' work, not 2 × NICs flat counters per node.
TEST(PerfettoImport, EachNodesNicCountersAreAProcessAfterTheRanks) {
  const Json json = trace_json(test::sample_run().systems[0].first_trace, {"sample", "zeppelin"});
  std::map<int, std::string> process_name;
  std::map<int, int> process_sort;
  std::map<int, std::set<std::string>> counters;
  for (const Json& e : json["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") process_name[e["pid"]] = e["args"]["name"];
    if (e["ph"] == "M" && e["name"] == "process_sort_index") process_sort[e["pid"]] = e["args"]["sort_index"];
    if (e["ph"] == "C") counters[e["pid"]].insert(e["name"]);
  }
  ASSERT_EQ(counters.size(), 2U);
  for (const auto& [pid, names] : counters) {
    const std::string& name = process_name[pid];
    ASSERT_EQ(name.size(), std::string("node 0 \u00b7 NICs").size()) << name;
    const std::string node = name.substr(5, 1);
    EXPECT_EQ(name, "node " + node + " \u00b7 NICs");
    EXPECT_EQ(names, (std::set<std::string>{"n" + node + "-nic0-tx", "n" + node + "-nic0-rx",
                                            "n" + node + "-nic1-tx", "n" + node + "-nic1-rx"}));
  }
  // In node order, after both nodes' processes.
  std::vector<std::string> order;
  std::map<int, int> by_sort;
  for (const auto& [pid, index] : process_sort) by_sort[index] = pid;
  for (const auto& [index, pid] : by_sort) order.push_back(process_name[pid]);
  EXPECT_EQ(order, (std::vector<std::string>{"time axis: one representative layer", "node 0", "node 1",
                                             "node 0 \u00b7 NICs", "node 1 \u00b7 NICs"}));
}

// Within a node, a rank's CUDA-stream tracks follow its own executor tracks, before the next rank's.
TEST(PerfettoImport, ARanksCudaStreamsSortWithTheRank) {
  const Json json = trace_json(trace_with_device_tracks(), {"sample", "cuda"});
  std::map<std::pair<int, int>, std::string> names;
  std::map<std::pair<int, int>, int> sort;
  for (const Json& e : json["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") names[{e["pid"], e["tid"]}] = e["args"]["name"];
    if (e["ph"] == "M" && e["name"] == "thread_sort_index")
      sort[{e["pid"], e["tid"]}] = e["args"]["sort_index"];
  }
  std::map<int, std::string> node0;  // sort index → name, node 0's process (pid 1)
  for (const auto& [track, name] : names)
    if (track.first == 1) node0[sort.at(track)] = name;
  std::vector<std::string> order;
  for (const auto& [index, name] : node0)
    if (name.rfind("rank 0 ", 0) == 0 || name.rfind("rank 1 ", 0) == 0) order.push_back(name);
  EXPECT_EQ(order,
            (std::vector<std::string>{"rank 0 \u00b7 compute", "rank 0 \u00b7 send", "rank 0 \u00b7 relay",
                                      "rank 0 \u00b7 cuda stream 13", "rank 0 \u00b7 cuda stream 14",
                                      "rank 1 \u00b7 compute", "rank 1 \u00b7 send"}));
}

}  // namespace
}  // namespace zb::reports
