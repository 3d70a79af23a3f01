#include "tests/unit/reports/sample_run.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "reports/json_report.hpp"

namespace zb::test {
namespace {

constexpr int nodes = 2;
constexpr int gpus_per_node = 4;
constexpr int nics_per_node = 2;
constexpr int world = nodes * gpus_per_node;
constexpr int bins = 10;

Scenario sample_scenario(const SampleOptions& options) {
  Scenario s;
  s.name = options.scenario_name;
  s.description = "Hand-built sample for reporter tests & <markup> checks";
  s.cluster.preset = "test-node";
  s.cluster.nodes = nodes;
  s.cluster.gpus_per_node = gpus_per_node;
  s.cluster.gpu = GpuSpec{"H200", 989e12, 141.0 * (1ULL << 30)};
  s.cluster.nics_per_node = nics_per_node;
  s.cluster.nic = LinkSpec{50e9, 5e-6};
  s.cluster.gpu_to_nic = {0, 0, 1, 1};
  s.model.preset = "llama-7b";
  s.model.layers = 32;
  s.model.hidden = 4096;
  s.model.heads = 32;
  s.model.kv_heads = 32;
  s.seed = options.seed;
  s.workload.iterations = options.iterations;
  s.workload.tokens_per_iteration = 65536;
  s.systems = {SystemSpec{"zeppelin", "zeppelin", nlohmann::json::object()},
               // As the loader gives it: every option, "auto" for the degree (its default).
               SystemSpec{"ring-cp", "ring-cp", nlohmann::json{{"degree", "auto"}, {"dealing", "balanced"}}},
               SystemSpec{"uniform-cp", "uniform-cp", nlohmann::json{{"degree", 8}}}};
  s.gates = {GateSpec{"speedup", "zeppelin", "ring-cp", 1.2, std::nullopt},
             GateSpec{"mfu", "ring-cp", "", 0.9, std::nullopt}};
  s.source_json =
      nlohmann::json{{"name", options.scenario_name},
                     {"seed", options.seed},
                     {"workload", {{"iterations", options.iterations}}},
                     {"cluster", {{"preset", "test-node"}, {"nodes", nodes}}},
                     {"systems", {"zeppelin", "ring-cp", {{"name", "uniform-cp"}, {"degree", 8}}}}};
  return s;
}

TraceEvent event(int rank, Track track, std::string name, EventCategory category, Pass pass, double start,
                 double end) {
  TraceEvent e;
  e.rank = rank;
  e.track = track;
  e.name = std::move(name);
  e.category = category;
  e.pass = pass;
  e.start = start;
  e.end = end;
  return e;
}

RingStepTransfer ring_step(int step, int src, int dst, double start, double end) {
  RingStepTransfer r;
  r.group = 0;
  r.step = step;
  r.level = plan::Level::inter_node;
  r.group_level = plan::Level::inter_node;
  r.src = src;
  r.dst = dst;
  r.bytes = 64e6;
  r.start = start;
  r.end = end;
  return r;
}

// A trace whose shape depends on `skew`: rank r's attention takes (1 + skew · r / world) units.
Trace sample_trace(double layer_seconds, double skew) {
  Trace t;
  t.backend = "sim";
  t.simulator_version = "SimGrid 3.32";
  t.model_note = "simulated by SimGrid 3.32 flow model; compute from the cost model";
  t.world_size = world;
  t.gpus_per_node = gpus_per_node;
  t.nics_per_node = nics_per_node;
  t.layers = 32;
  t.backward = true;
  t.layer.forward = layer_seconds / 3;
  t.layer.backward = 2 * layer_seconds / 3;
  t.iteration_seconds = t.layers * layer_seconds;
  for (const Pass pass : {Pass::fwd, Pass::bwd}) {
    const double origin = pass == Pass::fwd ? 0 : t.layer.forward;
    const double span = pass == Pass::fwd ? t.layer.forward : t.layer.backward;
    for (int rank = 0; rank < world; ++rank) {
      const double attention = span * 0.5 * (1 + skew * rank / world) / (1 + skew);
      TraceEvent attention_event = event(rank, Track::compute, "attn g0 s0", EventCategory::attention, pass,
                                         origin, origin + attention);
      attention_event.flops = 1e12;
      attention_event.group = 0;
      attention_event.step = 0;
      t.events.push_back(attention_event);
      TraceEvent gemm = event(rank, Track::compute, "qkv", EventCategory::gemm, pass, origin + attention,
                              origin + attention + span * 0.3);
      gemm.flops = 5e11;
      t.events.push_back(gemm);
      TraceEvent send = event(rank, Track::comm, fmt::format("send g0 s0 \u2192 {}", (rank + 1) % world),
                              EventCategory::send, pass, origin, origin + span * 0.4);
      send.bytes = 64e6;
      send.peer = (rank + 1) % world;
      t.events.push_back(send);
      if (rank % gpus_per_node == 0) {
        TraceEvent relay = event(rank, Track::nic, "relay", EventCategory::route_nic, pass,
                                 origin + span * 0.1, origin + span * 0.3);
        relay.bytes = 32e6;
        relay.peer = (rank + gpus_per_node) % world;
        t.events.push_back(relay);
      }
    }
  }
  for (int node = 0; node < nodes; ++node) {
    for (int nic = 0; nic < nics_per_node; ++nic) {
      for (const LinkKind kind : {LinkKind::nic_tx, LinkKind::nic_rx}) {
        LinkLoad link;
        link.name = fmt::format("n{}-nic{}-{}", node, nic, kind == LinkKind::nic_tx ? "tx" : "rx");
        link.kind = kind;
        link.node = node;
        link.index = nic;
        link.bandwidth = 50e9;
        link.series = {
            {0, 0}, {layer_seconds * 0.1, 30e9}, {layer_seconds * 0.4, 10e9}, {layer_seconds * 0.8, 0}};
        link.bytes = 30e9 * layer_seconds * 0.3 + 10e9 * layer_seconds * 0.4;
        link.busy_seconds = layer_seconds * 0.7;
        t.links.push_back(link);
      }
    }
  }
  t.ring_steps = {ring_step(0, 0, 4, 0, layer_seconds * 0.1),
                  ring_step(1, 4, 0, layer_seconds * 0.1, layer_seconds * 0.25)};
  t.ring_step_stats = ring_step_statistics(t.ring_steps);
  return t;
}

RunMetrics sample_metrics(double iteration_seconds, double skew, double predicted_seconds) {
  RunMetrics m;
  m.iteration_seconds = iteration_seconds;
  m.tokens = 65536;
  m.tokens_per_second = m.tokens / iteration_seconds;
  m.useful_flops = 2.4e15;  // MFU ≈ 30 % at 1 s on 8 GPUs
  m.model_tflops_per_gpu = m.useful_flops / iteration_seconds / world / 1e12;
  m.mfu = m.model_tflops_per_gpu * 1e12 / 989e12;
  m.critical_rank = world - 1;
  // The layers take 95 % of the iteration; embedding and head 3 %, exposed gradient sync 1 % (of 4 %),
  // the optimizer 1 %.
  m.layers_seconds = iteration_seconds * 0.95;
  m.embedding_and_head_seconds = iteration_seconds * 0.03;
  m.gradient_sync_seconds = iteration_seconds * 0.04;
  m.gradient_sync_exposed_seconds = iteration_seconds * 0.01;
  m.optimizer_seconds = iteration_seconds * 0.01;
  const auto breakdown = [&](double attention, double idle, double head) {
    return TimeBreakdown{.attention = iteration_seconds * attention,
                         .linear = iteration_seconds * 0.25,
                         .remap = iteration_seconds * 0.1,
                         .tensor_parallel = 0,  // the sample has no tensor parallelism
                         .exposed_communication = iteration_seconds * 0.15,
                         .idle = iteration_seconds * idle,
                         .embedding_and_head = iteration_seconds * head,
                         .gradient_sync_exposed = iteration_seconds * 0.01,
                         .optimizer = iteration_seconds * 0.01};
  };
  m.critical_rank_breakdown = breakdown(0.42, 0.03, 0.03);
  m.mean_breakdown = breakdown(0.32, 0.14, 0.02);
  m.attention_imbalance = 1 + skew / 2;
  m.token_imbalance = 1.0;
  for (int node = 0; node < nodes; ++node) {
    for (int nic = 0; nic < nics_per_node; ++nic) {
      NicMetrics n;
      n.node = node;
      n.nic = nic;
      n.bandwidth = 50e9;
      n.tx_bytes = 4e9 * (1 + nic);
      n.rx_bytes = 3e9 * (1 + nic);
      n.tx_utilization = n.tx_bytes / (n.bandwidth * iteration_seconds);
      n.rx_utilization = n.rx_bytes / (n.bandwidth * iteration_seconds);
      n.busy_share = 0.7;
      for (int b = 0; b < bins; ++b) {
        n.tx_timeline.push_back(b >= 1 && b < 8 ? (b < 4 ? 0.6 : 0.2) * (1 + 0.2 * nic) : 0.0);
        n.rx_timeline.push_back(b >= 2 && b < 8 ? 0.4 : 0.0);
      }
      m.nics.push_back(n);
    }
  }
  m.nic_utilization_mean = 0.12;
  m.nic_utilization_max = 0.31;
  m.nic_busy_share_mean = 0.7;
  m.nic_busy_share_max = 0.7;
  // NVLink: 450 GB/s ports; even GPUs send 2 GB and odd ones 4 GB per iteration, each receiving its
  // neighbour's bytes, over the layers' time.
  for (int rank = 0; rank < world; ++rank) {
    NvlinkMetrics g;
    g.node = rank / gpus_per_node;
    g.gpu = rank % gpus_per_node;
    g.bandwidth = 450e9;
    g.tx_bytes = 2e9 * (1 + rank % 2);
    g.rx_bytes = 2e9 * (2 - rank % 2);
    g.tx_utilization = g.tx_bytes / (g.bandwidth * m.layers_seconds);
    g.rx_utilization = g.rx_bytes / (g.bandwidth * m.layers_seconds);
    m.nvlink_bytes += g.tx_bytes;
    m.nvlink_utilization_mean += (g.tx_utilization + g.rx_utilization) / (2.0 * world);
    m.nvlink_utilization_max = std::max({m.nvlink_utilization_max, g.tx_utilization, g.rx_utilization});
    m.nvlinks.push_back(g);
  }
  m.timeline_bins = bins;
  m.timeline_bin_seconds = iteration_seconds / 32 / bins;
  m.predicted_seconds = predicted_seconds;
  m.prediction_ratio = predicted_seconds / iteration_seconds;
  return m;
}

}  // namespace

SystemResult feasible_system(const SystemSpec& spec, const std::vector<double>& times, double skew,
                             const std::vector<nlohmann::json>& plan_infos) {
  SystemResult result;
  result.system = spec;
  for (std::size_t i = 0; i < times.size(); ++i) {
    IterationResult it;
    it.iteration = static_cast<int>(i);
    it.planner_seconds = 0.010 + 0.001 * static_cast<double>(i);
    it.predicted_seconds = times[i] * 0.95;
    it.metrics = sample_metrics(times[i], skew, it.predicted_seconds);
    if (!plan_infos.empty()) it.plan_info = plan_infos[i % plan_infos.size()];
    result.iterations.push_back(it);
  }
  result.first_trace = sample_trace(times.front() / 32, skew);
  result.has_trace = true;
  return result;
}

SystemResult oom_system(const SystemSpec& spec, int iterations) {
  SystemResult result;
  result.system = spec;
  for (int i = 0; i < iterations; ++i) {
    IterationResult it;
    it.iteration = i;
    it.feasible = false;
    it.planner_seconds = 0.002;
    it.oom = {plan::OomReport{3, 0, 40000, 23393}};
    result.iterations.push_back(it);
  }
  return result;
}

RunResult sample_run(const SampleOptions& options) {
  RunResult run;
  run.scenario = sample_scenario(options);
  run.backend = options.backend;
  // Capacities of the test cluster as the long-document shares see them: about half the sample's longest
  // documents are above one GPU's, none above one node's.
  run.long_documents.gpu_capacity_tokens = 8000;
  run.long_documents.node_capacity_tokens = 4 * 8000;
  std::vector<double> zeppelin_times, ring_times;
  const auto seed_shift = static_cast<std::int64_t>(options.seed - 1);
  for (int i = 0; i < options.iterations; ++i) {
    const double jitter = 1 + options.jitter * ((i % 3) - 1);
    const double scale = options.time_scale * jitter;
    // Distinct values (up to 10 iterations) so U tests on them have no ties.
    zeppelin_times.push_back(scale * (1.00 + 0.013 * ((i * 7) % 5) + 0.002 * (i / 5)));
    ring_times.push_back(scale * (1.50 + 0.017 * ((i * 3) % 5) + 0.003 * (i / 5)));
    Batch batch;
    batch.iteration = i;
    for (int d = 0; d < 40; ++d)
      batch.lengths.push_back(64 + (d * d * 37 + i * 101 + seed_shift * 13) % 16000);
    run.workload.add(batch);
    run.long_documents.add(i, batch.lengths);
  }
  // Zeppelin's thresholds are structure (no option), left out of the resolved options; its layout is its
  // own partition in two iterations of three and hybrid-dp's in the third (as best_of records a baseline
  // layout that won); ring-cp's pack count differs between iterations, as a real one does.
  const nlohmann::json zeppelin_info{
      {"routing", true},
      {"remap", true},
      {"partitioning", "hierarchical"},
      {"layout", "hierarchical"},
      {"thresholds", nlohmann::json::array({{{"micro_batch", 0}, {"local", 4096}}})}};
  nlohmann::json zeppelin_hybrid_info = zeppelin_info;
  zeppelin_hybrid_info["layout"] = "hybrid-dp";
  const nlohmann::json ring_info{{"degree", 8}, {"groups", 1}, {"dealing", "balanced"}, {"packs", 2}};
  nlohmann::json ring_info_more_packs = ring_info;
  ring_info_more_packs["packs"] = 3;
  run.systems.push_back(feasible_system(run.scenario.systems[0], zeppelin_times, 0.05,
                                        {zeppelin_info, zeppelin_info, zeppelin_hybrid_info}));
  SystemResult ring =
      feasible_system(run.scenario.systems[1], ring_times, 0.6, {ring_info, ring_info_more_packs});
  for (int k = 0; k < options.ring_cp_oom_iterations && k < options.iterations; ++k) {
    IterationResult& it = ring.iterations[static_cast<std::size_t>(options.iterations - 1 - k)];
    it.feasible = false;
    it.oom = {plan::OomReport{5, 0, 30000, 23393}};
    it.plan_info = nlohmann::json::object();  // an OOM plan records no facts
  }
  run.systems.push_back(std::move(ring));
  run.systems.push_back(oom_system(run.scenario.systems[2], options.iterations));
  return run;
}

reports::RunContext fixed_context() {
  reports::RunContext c;
  c.backend = "sim";
  c.simulated = true;
  c.tool_version = "0.1.0";
  c.git_sha = "0123456789ab";
  c.git_dirty = false;
  c.build_type = "RelWithDebInfo";
  c.libraries = {{"simgrid", "3.32"}, {"fmt", "9.1.0"}};
  c.argv = {"zeppelin-bench", "run", "sample.json"};
  c.host.name = "test-host";
  c.host.os = "Linux 6.0 x86_64";
  c.host.cpu_model = "Test CPU";
  c.host.logical_cpus = 8;
  c.host.memory_bytes = std::int64_t{64} << 30;
  c.host.gpus = {{"NVIDIA H200", "0000:18:00.0"}};
  c.host.gpu_driver = "550.90.07";
  c.date_utc = "2026-01-01T00:00:00Z";
  c.nccl_environment = {{"NCCL_IB_HCA", "mlx5"}};
  return c;
}

nlohmann::json sample_report_json(const SampleOptions& options) {
  const RunResult run = sample_run(options);
  reports::RunContext context = fixed_context();
  context.backend = options.backend;
  context.simulated = options.backend == "sim";
  return nlohmann::json::parse(
      reports::dump_report(reports::report_json(run, reports::summarize_run(run), context)));
}

}  // namespace zb::test
