// A Perfetto trace is bounded by a budget of slices, not by ranks × ops (docs/REPORT_FORMAT.md, "Size"):
// under the budget everything is written as before; above it the trace shows whole nodes, node 0 and the
// node whose rank ends last first, then nodes spread over the cluster, says which, draws no arrow to a
// rank it does not show and no counter of a NIC it does not show, and its bytes stay under the formula.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "core/common/rng.hpp"
#include "reports/perfetto_trace.hpp"
#include "reports/trace_sampling.hpp"

namespace zb {
namespace {

using Json = nlohmann::json;

// A ring over nodes × gpus ranks, `steps` steps: each rank computes one attention slice per step and sends
// its K/V to the next rank (the recv on that rank), rank `slow` finishing last; every node has one NIC
// with a load sample per step. Times are large (seconds), so numbers print at full length.
Trace ring_trace(int nodes, int gpus, int steps, int slow) {
  Trace t;
  t.backend = "sim";
  t.world_size = nodes * gpus;
  t.gpus_per_node = gpus;
  t.nics_per_node = 1;
  t.layers = 80;
  t.backward = false;
  double end = 0;
  for (int r = 0; r < t.world_size; ++r) {
    const int next = (r + 1) % t.world_size;
    for (int s = 0; s < steps; ++s) {
      const double t0 = 1000.123456789 + s * 10.0 + (r == slow ? 5.0 : 0.0);
      TraceEvent a{.rank = r,
                   .name = "attn",
                   .category = EventCategory::attention,
                   .start = t0,
                   .end = t0 + 5.987654321,
                   .flops = 1.234567890123e15,
                   .op = 3 * s,
                   .group = 0,
                   .step = s};
      t.events.push_back(a);
      TraceEvent send{.rank = r,
                      .track = Track::comm,
                      .name = "kv",
                      .category = EventCategory::send,
                      .start = t0 + 6,
                      .end = t0 + 8.5,
                      .bytes = 123456789012.0,
                      .op = 3 * s + 1,
                      .peer = next,
                      .group = 0,
                      .step = s};
      TraceEvent recv = send;
      recv.rank = next;
      recv.peer = r;
      recv.category = EventCategory::recv;
      recv.op = 3 * s + 2;
      t.events.push_back(send);
      t.events.push_back(recv);
      end = std::max(end, t0 + 8.5);
    }
  }
  for (int n = 0; n < nodes; ++n) {
    for (const LinkKind kind : {LinkKind::nic_tx, LinkKind::nic_rx}) {
      LinkLoad l;
      l.name = "nic";
      l.kind = kind;
      l.node = n;
      l.index = 0;
      l.bandwidth = 50e9;
      for (int s = 0; s < steps; ++s) l.series.push_back({1000.5 + s * 10.0, 48.123456789e9});
      l.series.push_back({end, 0});
      t.links.push_back(l);
    }
  }
  t.layer.forward = end;
  t.iteration_seconds = end * t.layers;
  return t;
}

std::size_t slices_of_node(const Trace& t, int node) {
  std::size_t n = 0;
  for (const TraceEvent& e : t.events) n += e.rank / t.gpus_per_node == node ? 1 : 0;
  return n;
}

// docs/REPORT_FORMAT.md, "Size": what a trace's bytes are bounded by, from what it holds.
std::size_t trace_bound(const Json& j) {
  std::size_t slices = 0, flow_ends = 0, counters = 0, metadata_events = 0;
  for (const Json& e : j["traceEvents"]) {
    const std::string ph = e["ph"];
    slices += ph == "X" ? 1 : 0;
    flow_ends += ph == "s" || ph == "f" ? 1 : 0;
    counters += ph == "C" ? 1 : 0;
    metadata_events += ph == "M" ? 1 : 0;
  }
  return 4096 + 300 * slices + 100 * flow_ends + 128 * counters + 120 * metadata_events;
}

TEST(TraceSize, UnderTheBudgetEveryNodeIsShownAsBefore) {
  const Trace t = ring_trace(4, 2, 6, 5);
  const Json j = Json::parse(
      reports::perfetto_trace_json(t, {"ring", "ring-cp"}, {.max_slices = t.events.size()}).dump());
  EXPECT_FALSE(j["metadata"].contains("shown"));
  std::set<std::string> processes;
  for (const Json& e : j["traceEvents"]) {
    if (e["name"] == "process_name") processes.insert(e["args"]["name"].get<std::string>());
  }
  for (int n = 0; n < 4; ++n) {
    EXPECT_TRUE(processes.count("node " + std::to_string(n))) << n;
    EXPECT_TRUE(processes.count("node " + std::to_string(n) + " \u00b7 NICs")) << n;
  }
}

TEST(TraceSize, AboveTheBudgetWholeNodesAreShownNodeZeroAndTheStragglersFirst) {
  // 16 nodes of 4 GPUs, rank 45 (node 11) ends last; room for three nodes.
  const Trace t = ring_trace(16, 4, 10, 45);
  const std::size_t per_node = slices_of_node(t, 0);
  const std::string text =
      reports::perfetto_trace_json(t, {"ring", "ring-cp"}, {.max_slices = 3 * per_node}).dump();
  const Json j = Json::parse(text);
  // Node 0, the straggler's node 11, then the spread order's first that fits: node 8.
  const std::set<int> shown{0, 8, 11};
  EXPECT_EQ(j["metadata"]["shown"], "nodes 0, 8, 11 of 16: 12 of 64 ranks, " + std::to_string(3 * per_node) +
                                        " of " + std::to_string(t.events.size()) +
                                        " slices (larger traces show whole nodes)");
  std::map<long, int> flow_ends;
  std::set<std::string> counters;
  for (const Json& e : j["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "X" && e["cat"] != "time-axis") {
      EXPECT_TRUE(shown.count(e["pid"].get<int>() - 1)) << e.dump();  // pid N + 1 = node N
    } else if (ph == "X") {
      EXPECT_EQ(e["args"]["shown"], j["metadata"]["shown"]) << "the timeline says it too";
    }
    if (ph == "s" || ph == "f") ++flow_ends[e["id"].get<long>()];
    if (ph == "C") counters.insert(e["name"].get<std::string>());
  }
  for (const auto& [id, ends] : flow_ends) EXPECT_EQ(ends, 2) << "arrow " << id << " has both ends";
  // An arrow joins ring neighbours of one shown node: 3 of each node's 4 sends per step (its last rank
  // sends to a hidden node, its first receives from one).
  EXPECT_EQ(flow_ends.size(), 3u * 3u * 10u);
  EXPECT_EQ(counters, (std::set<std::string>{"n0-nic0-tx", "n0-nic0-rx", "n8-nic0-tx", "n8-nic0-rx",
                                             "n11-nic0-tx", "n11-nic0-rx"}));
  EXPECT_LE(text.size(), trace_bound(j));
}

TEST(TraceSize, NodeZeroIsShownEvenAboveTheBudgetAlone) {
  const Trace t = ring_trace(4, 8, 5, 30);
  const reports::TraceSample s = reports::sample_nodes(t, 10);
  EXPECT_EQ(s.nodes, std::vector<int>{0});
  EXPECT_EQ(s.slices, slices_of_node(t, 0));
}

// Over random cluster shapes and budgets: the shown nodes are whole, ascending, include node 0, fit the
// budget unless node 0 alone does not, include the straggler's node when it fits beside node 0, are every
// node exactly when the whole trace fits; and the JSON stays under the size formula.
TEST(TraceSize, SamplingKeepsItsPromisesOnRandomShapes) {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    Rng rng(seed, 7);
    const int nodes = 1 + static_cast<int>(rng.below(24));
    const int gpus = 1 + static_cast<int>(rng.below(8));
    const int slow = static_cast<int>(rng.below(static_cast<std::uint64_t>(nodes * gpus)));
    const Trace t = ring_trace(nodes, gpus, 1 + static_cast<int>(rng.below(6)), slow);
    const std::size_t budget = rng.below(t.events.size() + 10);
    const reports::TraceSample s = reports::sample_nodes(t, budget);
    const std::string where = "seed " + std::to_string(seed);
    ASSERT_FALSE(s.nodes.empty()) << where;
    EXPECT_EQ(s.nodes.front(), 0) << where;
    EXPECT_TRUE(std::is_sorted(s.nodes.begin(), s.nodes.end())) << where;
    EXPECT_EQ(std::adjacent_find(s.nodes.begin(), s.nodes.end()), s.nodes.end()) << where;
    std::size_t slices = 0;
    for (const int n : s.nodes) slices += slices_of_node(t, n);
    EXPECT_EQ(slices, s.slices) << where;
    EXPECT_LE(s.slices, std::max(budget, slices_of_node(t, 0))) << where;
    EXPECT_EQ(s.everything(), t.events.size() <= budget) << where;
    const int straggler = slow / gpus;
    if (slices_of_node(t, 0) + slices_of_node(t, straggler) <= budget || straggler == 0) {
      EXPECT_TRUE(std::count(s.nodes.begin(), s.nodes.end(), straggler)) << where;
    }
    const std::string text =
        reports::perfetto_trace_json(t, {"ring", "ring-cp"}, {.max_slices = budget}).dump();
    EXPECT_LE(text.size(), trace_bound(Json::parse(text))) << where;
  }
}

}  // namespace
}  // namespace zb
