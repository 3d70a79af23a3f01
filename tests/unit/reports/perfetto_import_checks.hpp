#pragma once
// What the two trace viewers actually read of a trace file, as checks a test runs on the parsed JSON.
//
// Perfetto (ui.perfetto.dev, trace_processor), google/perfetto src/trace_processor/importers/json/:
// - json_trace_tokenizer.cc (v58.0 on) reads four top-level keys: traceEvents, systemTraceEvents,
//   displayTimeUnit and metadata; every other key (otherData among them) is skipped unread. Each field of
//   `metadata` becomes a row `json_metadata.<key>` of the metadata table (a number or bool as an integer,
//   a string as itself, an object or array as its raw JSON text, a null dropped), so the facts belong
//   there, as flat scalars.
// - json_trace_parser.cc keeps an "M" event only if it is process_name or thread_name (args.name) or
//   process_sort_index or thread_sort_index (args.sort_index); any other name (process_labels) is dropped.
// - a "C" event is a counter of its pid's process, named "<name> <arg key>"; an event without a tid gets
//   tid = pid (the tokenizer), which in a file that numbers tids across processes may be another
//   process's track, so counters carry a tid of their own.
// - the UI (ui/src/plugins/dev.perfetto.ProcessThreadGroups) orders processes by process_sort_index and a
//   process's threads by thread_sort_index.
// catapult (chrome://tracing, tracing/extras/importer/trace_event_importer.html) shows every top-level key
// but the event arrays as metadata, sorts processes and threads by the same two indices, and draws a
// process's counters above its threads (ui/tracks/process_track_base.html): counters that share a process
// with the ranks are the first thing seen.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace zb::test {

using TraceJson = nlohmann::json;

// The run's facts are in the top-level "metadata" object, every value a string, number or bool (what
// Perfetto's metadata table holds as itself): scenario, system, backend, whether the times are simulated
// or measured, and the time-axis note with the layer count.
inline void expect_run_facts_in_metadata(const TraceJson& trace, const std::string& scenario,
                                         const std::string& system) {
  ASSERT_TRUE(trace.contains("metadata") && trace["metadata"].is_object())
      << "no top-level \"metadata\": Perfetto reads no other key for the run's facts";
  const TraceJson& metadata = trace["metadata"];
  for (const auto& [key, value] : metadata.items()) {
    EXPECT_TRUE(value.is_string() || value.is_number() || value.is_boolean())
        << "metadata." << key << " is " << value.type_name() << ", which Perfetto keeps as raw text or drops";
  }
  EXPECT_EQ(metadata.value("scenario", ""), scenario);
  EXPECT_EQ(metadata.value("system", ""), system);
  EXPECT_FALSE(metadata.value("backend", "").empty());
  const std::string timing = metadata.value("timing", "");
  EXPECT_TRUE(timing == "simulated" || timing == "measured") << "metadata.timing \"" << timing << "\"";
  EXPECT_EQ(timing == "simulated", metadata.value("backend", "") == "sim");
  EXPECT_NE(metadata.value("time_axis", "").find("one representative layer"), std::string::npos);
  EXPECT_TRUE(metadata.contains("layers") && metadata["layers"].is_number_integer());
}

// Every "M" event is one of the four Perfetto's parser keeps, with the argument it reads.
inline void expect_only_metadata_events_perfetto_reads(const TraceJson& trace) {
  for (const TraceJson& e : trace["traceEvents"]) {
    if (e["ph"] != "M") continue;
    const std::string name = e["name"];
    if (name == "process_name" || name == "thread_name") {
      EXPECT_TRUE(e["args"].contains("name") && e["args"]["name"].is_string()) << e.dump();
    } else if (name == "process_sort_index" || name == "thread_sort_index") {
      EXPECT_TRUE(e["args"].contains("sort_index") && e["args"]["sort_index"].is_number_integer())
          << e.dump();
    } else {
      ADD_FAILURE() << "metadata event \"" << name << "\" is dropped by Perfetto's JSON importer";
    }
    EXPECT_TRUE(e.contains("pid")) << e.dump();
  }
}

// Every counter event carries a pid and a tid; one counter (pid, name) keeps one tid, and that tid is no
// slice track's, so the counter never lands on, or renames, a rank's thread.
inline void expect_counters_have_pid_and_tid(const TraceJson& trace) {
  std::set<int> slice_tids;
  for (const TraceJson& e : trace["traceEvents"])
    if (e["ph"] == "X") slice_tids.insert(e["tid"].get<int>());
  std::map<std::pair<int, std::string>, int> tid_of_counter;
  int counters = 0;
  for (const TraceJson& e : trace["traceEvents"]) {
    if (e["ph"] != "C") continue;
    ++counters;
    ASSERT_TRUE(e.contains("pid") && e["pid"].is_number_integer()) << e.dump();
    ASSERT_TRUE(e.contains("tid") && e["tid"].is_number_integer()) << "counter without a tid: " << e.dump();
    const int tid = e["tid"];
    const auto [it, first] = tid_of_counter.emplace(std::make_pair(e["pid"].get<int>(), e["name"]), tid);
    EXPECT_EQ(it->second, tid) << "counter " << e["name"] << " changes its tid";
    if (first) {
      EXPECT_EQ(slice_tids.count(tid), 0U) << "counter " << e["name"] << " uses a slice track's tid";
    }
  }
  EXPECT_GT(counters, 0) << "no counter events, so none was checked";
}

// The order both viewers draw: processes by process_sort_index, a process's threads by thread_sort_index.
// Every process and every rank thread has its index, distinct among its siblings, so the order is the
// writer's and not a viewer's tie-break. Every rank track (a thread named "rank R · ...") comes before
// every NIC counter, the ranks in ascending order, and no counter shares a process with a rank track.
inline void expect_ranks_before_nic_counters(const TraceJson& trace) {
  std::map<int, int> process_sort;                     // pid → sort index
  std::map<std::pair<int, int>, int> thread_sort;      // (pid, tid) → sort index
  std::map<std::pair<int, int>, std::string> threads;  // (pid, tid) → name
  std::set<int> counter_pids, rank_pids;
  for (const TraceJson& e : trace["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "M" && e["name"] == "process_sort_index") process_sort[e["pid"]] = e["args"]["sort_index"];
    if (ph == "M" && e["name"] == "thread_sort_index")
      thread_sort[{e["pid"], e["tid"]}] = e["args"]["sort_index"];
    if (ph == "M" && e["name"] == "thread_name") threads[{e["pid"], e["tid"]}] = e["args"]["name"];
    if (ph == "C") counter_pids.insert(e["pid"].get<int>());
  }
  struct RankTrack {
    int process_sort = 0, thread_sort = 0, rank = 0;
    std::string name;
  };
  std::vector<RankTrack> ranks;
  for (const auto& [track, name] : threads) {
    if (name.rfind("rank ", 0) != 0) continue;
    rank_pids.insert(track.first);
    ASSERT_TRUE(process_sort.count(track.first)) << "process " << track.first << " has no sort index";
    ASSERT_TRUE(thread_sort.count(track)) << name << " has no thread sort index";
    ranks.push_back({process_sort[track.first], thread_sort[track], std::stoi(name.substr(5)), name});
  }
  ASSERT_FALSE(ranks.empty()) << "no rank tracks";
  std::set<int> used;
  for (const auto& [pid, index] : process_sort)
    EXPECT_TRUE(used.insert(index).second) << "two processes share sort index " << index;
  std::set<std::pair<int, int>> used_in_process;
  for (const auto& [track, index] : thread_sort)
    EXPECT_TRUE(used_in_process.insert({track.first, index}).second)
        << "two threads of process " << track.first << " share sort index " << index;

  int last_rank_process = ranks.front().process_sort;
  for (const RankTrack& r : ranks) last_rank_process = std::max(last_rank_process, r.process_sort);
  ASSERT_FALSE(counter_pids.empty()) << "no counters";
  for (const int pid : counter_pids) {
    EXPECT_EQ(rank_pids.count(pid), 0U) << "NIC counters share process " << pid << " with rank tracks";
    ASSERT_TRUE(process_sort.count(pid)) << "counter process " << pid << " has no sort index";
    EXPECT_GT(process_sort[pid], last_rank_process) << "counter process " << pid << " sorts among the ranks";
  }
  std::sort(ranks.begin(), ranks.end(), [](const RankTrack& a, const RankTrack& b) {
    return std::tie(a.process_sort, a.thread_sort) < std::tie(b.process_sort, b.thread_sort);
  });
  for (std::size_t i = 1; i < ranks.size(); ++i)
    EXPECT_LE(ranks[i - 1].rank, ranks[i].rank) << ranks[i - 1].name << " is drawn before " << ranks[i].name;
}

// All four, for a trace of `scenario` / `system`.
inline void expect_what_perfetto_reads(const TraceJson& trace, const std::string& scenario,
                                       const std::string& system) {
  expect_run_facts_in_metadata(trace, scenario, system);
  expect_only_metadata_events_perfetto_reads(trace);
  expect_counters_have_pid_and_tid(trace);
  expect_ranks_before_nic_counters(trace);
}

}  // namespace zb::test
