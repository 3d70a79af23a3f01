#pragma once
// Hand-made clusters, models and plans for the simulator tests: built as structs, so the tests need
// neither the scenario parser nor a strategy.
#include <cstdint>
#include <string>
#include <vector>

#include "core/config/presets.hpp"
#include "core/config/scenario.hpp"
#include "core/cost/cost_model.hpp"
#include "core/exec/executor.hpp"
#include "core/plan/plan.hpp"
#include "core/run/execute.hpp"

namespace zb::sim_test {

// The closed forms' constants: point-to-point transfers run at this share of a link's bandwidth (the
// HardwareProfile::p2p_bandwidth_efficiency default), and times agree to SimGrid's timing precision.
inline constexpr double kEfficiency = 0.90;
inline constexpr double kTolerance = 2e-9;  // seconds

// nodes × gpus; NVLink 450 GB/s, 2 µs; `nics` NICs of 50 GB/s (400 Gbit/s), 5 µs; GPU i uses NIC
// i·nics/gpus (one per GPU on dgx-h200, two GPUs per NIC on a800-4nic).
inline ClusterSpec cluster(int nodes, int gpus, int nics) {
  ClusterSpec c;
  c.nodes = nodes;
  c.gpus_per_node = gpus;
  c.gpu = {"H200", 989e12, 141.0 * (1ULL << 30)};
  c.nvlink = {450e9, 2e-6};
  c.nics_per_node = nics;
  c.nic = {50e9, 5e-6};
  for (int g = 0; g < gpus; ++g) c.gpu_to_nic.push_back(g * nics / gpus);
  return c;
}

inline ClusterSpec dgx_h200(int nodes) {
  ClusterSpec c = cluster(nodes, 8, 8);
  c.preset = "dgx-h200";
  c.pcie_bandwidth = 64e9;
  return c;
}

// The model preset itself, so the simulator tests and the scenario files see the same model.
inline ModelSpec llama_7b() {
  return find_model_preset("llama-7b")->spec;
}

inline Scenario scenario(const ClusterSpec& c, Passes passes) {
  Scenario s;
  s.name = "sim-test";
  s.cluster = c;
  s.model = llama_7b();
  s.passes = passes;
  return s;
}

// An empty plan for the cluster: ranks with no ops.
inline plan::Plan empty_plan(const ClusterSpec& c) {
  plan::Plan p;
  p.system = "test";
  p.strategy = "hand-made";
  p.world_size = c.world_size();
  p.gpus_per_node = c.gpus_per_node;
  for (int r = 0; r < p.world_size; ++r) {
    p.ranks.push_back({r, {}});
    p.attention_layout.push_back({r, {}});
    p.linear_layout.push_back({r, {}});
  }
  return p;
}

inline int add_op(plan::Plan& p, int rank, plan::Op op) {
  auto& ops = p.ranks[static_cast<std::size_t>(rank)].ops;
  op.id = static_cast<int>(ops.size());
  ops.push_back(std::move(op));
  return ops.back().id;
}

// A send on src and its recv on dst; returns {send id, recv id}.
inline std::pair<int, int> add_transfer(plan::Plan& p, int src, int dst, std::int64_t bytes, int tag,
                                        std::vector<int> send_deps = {}, std::vector<int> recv_deps = {},
                                        plan::Route route = {}) {
  plan::Op send;
  send.kind = plan::OpKind::send;
  send.name = "send " + std::to_string(tag);
  send.peer = dst;
  send.tag = tag;
  send.bytes = bytes;
  send.route = std::move(route);
  send.deps = std::move(send_deps);
  plan::Op recv = send;
  recv.kind = plan::OpKind::recv;
  recv.name = "recv " + std::to_string(tag);
  recv.peer = src;
  recv.route = {};
  recv.deps = std::move(recv_deps);
  const int s = add_op(p, src, std::move(send));
  const int r = add_op(p, dst, std::move(recv));
  return {s, r};
}

inline plan::Op attention_op(double pairs, double q_tokens, std::vector<int> deps, int group = -1,
                             int step = -1) {
  plan::Op op;
  op.kind = plan::OpKind::attention;
  op.name = "attn";
  op.pairs = pairs;
  op.q_tokens = q_tokens;
  op.deps = std::move(deps);
  op.group = group;
  op.step = step;
  return op;
}

// A hop from node 0 to node 1 of dgx_h200(2) routed over all 8 NICs: proxy i and peer proxy 8 + i carry
// an eighth of `bytes` each, in `chunks` pipelined chunks.
inline plan::Route routed_over_every_nic(std::int64_t bytes, int chunks) {
  plan::Route route;
  route.kind = plan::RouteKind::routed;
  route.chunks = chunks;
  for (int i = 0; i < 8; ++i) {
    route.proxies.push_back(i);
    route.peer_proxies.push_back(8 + i);
    route.part_bytes.push_back(bytes / 8);
  }
  return route;
}

// The pure flow model: no per-message overhead and no interference. The closed forms of these tests are
// stated for bandwidth sharing and latency; overhead and interference have their own tests
// (overhead_interference_test.cpp) that start from the defaults.
inline HardwareProfile flow_model_profile() {
  HardwareProfile profile;
  profile.nvlink_transfer_overhead = 0;
  profile.nic_transfer_overhead = 0;
  profile.interference = 0;
  return profile;
}

inline Trace simulate(const plan::Plan& p, const ClusterSpec& c, Passes passes = Passes::fwd,
                      const HardwareProfile& profile = flow_model_profile()) {
  const Scenario s = scenario(c, passes);
  const CostModel cost(c, s.model, profile);
  auto executor = make_executor(Backend::sim);
  return execute(*executor, p, s, cost);
}

inline const LinkLoad& link(const Trace& t, const std::string& name) {
  for (const auto& l : t.links) {
    if (l.name == name) return l;
  }
  throw std::runtime_error("no link " + name);
}

}  // namespace zb::sim_test
