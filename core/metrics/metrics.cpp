#include "core/metrics/metrics.hpp"

#include <algorithm>
#include <cstddef>

#include "core/metrics/moe_metrics.hpp"
#include "core/plan/attention_flops.hpp"

namespace zb {

namespace {

enum class Activity { compute_attention, compute_linear, remap, tensor_parallel, comm };

struct Interval {
  double start;
  double end;
  Activity what;
};

// Time of [t0, t1) split by precedence: compute, then remap, then TP collectives, then communication, else
// idle. A sweep over interval ends with one counter per activity: O(n log n) in the rank's events.
void sweep(const std::vector<Interval>& intervals, double t0, double t1, TimeBreakdown& out) {
  struct Edge {
    double t;
    int what;
    int delta;
  };
  std::vector<Edge> edges;
  for (const auto& i : intervals) {
    const double a = std::clamp(i.start, t0, t1), b = std::clamp(i.end, t0, t1);
    if (!(b > a)) continue;
    edges.push_back({a, static_cast<int>(i.what), +1});
    edges.push_back({b, static_cast<int>(i.what), -1});
  }
  std::sort(edges.begin(), edges.end(), [](const Edge& x, const Edge& y) { return x.t < y.t; });
  int active[5] = {0, 0, 0, 0, 0};
  double now = t0;
  auto account = [&](double until) {
    const double d = until - now;
    if (d <= 0) return;
    if (active[static_cast<int>(Activity::compute_attention)] > 0)
      out.attention += d;
    else if (active[static_cast<int>(Activity::compute_linear)] > 0)
      out.linear += d;
    else if (active[static_cast<int>(Activity::remap)] > 0)
      out.remap += d;
    else if (active[static_cast<int>(Activity::tensor_parallel)] > 0)
      out.tensor_parallel += d;
    else if (active[static_cast<int>(Activity::comm)] > 0)
      out.exposed_communication += d;
    else
      out.idle += d;
  };
  for (const auto& e : edges) {
    account(e.t);
    now = std::max(now, e.t);
    active[e.what] += e.delta;
  }
  account(t1);
}

TimeBreakdown scaled(TimeBreakdown b, double f) {
  b.attention *= f;
  b.linear *= f;
  b.remap *= f;
  b.tensor_parallel *= f;
  b.exposed_communication *= f;
  b.idle *= f;
  b.embedding_and_head *= f;
  b.gradient_sync_exposed *= f;
  b.optimizer *= f;
  return b;
}

void add_scaled(TimeBreakdown& into, const TimeBreakdown& b, double f) {
  into.attention += b.attention * f;
  into.linear += b.linear * f;
  into.remap += b.remap * f;
  into.tensor_parallel += b.tensor_parallel * f;
  into.exposed_communication += b.exposed_communication * f;
  into.idle += b.idle * f;
  into.embedding_and_head += b.embedding_and_head * f;
  into.gradient_sync_exposed += b.gradient_sync_exposed * f;
  into.optimizer += b.optimizer * f;
}

double max_over_mean(const std::vector<double>& v) {
  if (v.empty()) return 1.0;
  double sum = 0, top = 0;
  for (double x : v) {
    sum += x;
    top = std::max(top, x);
  }
  return sum > 0 ? top / (sum / static_cast<double>(v.size())) : 1.0;
}

}  // namespace

std::vector<TimeBreakdown> rank_breakdowns(const Trace& trace) {
  std::vector<TimeBreakdown> out(static_cast<std::size_t>(trace.world_size));
  // Each pass is swept over its own window, so a rank that finishes early is idle until the pass ends.
  const struct {
    Pass pass;
    double t0, t1;
  } windows[] = {{Pass::fwd, 0.0, trace.layer.forward},
                 {Pass::bwd, trace.layer.forward, trace.layer.forward + trace.layer.backward}};
  std::vector<std::vector<Interval>> per_rank(out.size());
  for (const auto& w : windows) {
    if (!(w.t1 > w.t0)) continue;
    for (auto& v : per_rank) v.clear();
    for (const auto& e : trace.events) {
      if (e.pass != w.pass || e.track == Track::nic) continue;  // relay legs are other ranks' transfers
      Activity what = Activity::comm;
      if (e.category == EventCategory::attention)
        what = Activity::compute_attention;
      else if (e.category == EventCategory::gemm)
        what = Activity::compute_linear;
      else if (e.category == EventCategory::remap)
        what = Activity::remap;
      else if (e.category == EventCategory::tensor_parallel)
        what = Activity::tensor_parallel;
      per_rank[static_cast<std::size_t>(e.rank)].push_back({e.start, e.end, what});
    }
    for (std::size_t r = 0; r < out.size(); ++r) sweep(per_rank[r], w.t0, w.t1, out[r]);
  }
  for (auto& b : out) b = scaled(b, trace.layers);
  return out;
}

WholeIterationParts whole_iteration_parts_of(const plan::Plan& plan, const Trace& trace,
                                             const CostModel& cost, const WholeIterationSetup& setup,
                                             const std::vector<BucketCollectiveSeconds>& seconds) {
  return whole_iteration_parts(cost, setup, plan::whole_iteration_tokens_per_rank(plan, setup.tensor),
                               LayerWindow{trace.layer.forward, trace.backward ? trace.layer.backward : 0.0},
                               seconds);
}

RunMetrics compute_run_metrics(const plan::Plan& plan, const Trace& trace, const CostModel& cost,
                               const Scenario& scenario, int timeline_bins) {
  const WholeIterationSetup setup = whole_iteration_setup(cost, tensor_parallel_degree(scenario));
  return compute_run_metrics(
      plan, trace, cost, scenario,
      whole_iteration_parts_of(plan, trace, cost, setup, formula_buckets_seconds(cost, setup)),
      timeline_bins);
}

RunMetrics compute_run_metrics(const plan::Plan& plan, const Trace& trace, const CostModel& cost,
                               const Scenario& scenario, const WholeIterationParts& parts,
                               int timeline_bins) {
  RunMetrics m;
  const double n = std::max(1, plan.world_size);
  const double layers = cost.model().layers;
  m.layers_seconds = trace.iteration_seconds;
  m.embedding_and_head_seconds = parts.embedding_and_head_critical;
  m.gradient_sync_seconds = parts.gradient_sync_total;
  m.gradient_sync_exposed_seconds = parts.gradient_sync_exposed;
  m.optimizer_seconds = parts.optimizer;
  m.iteration_seconds = m.layers_seconds + parts.added_seconds();
  for (const auto& s : plan.sequences) {
    const double len = static_cast<double>(s.length);
    const double pairs = len * (len + 1) / 2;
    double flops = cost.attention_fwd_flops(pairs) + cost.linear_fwd_flops(len);
    if (trace.backward) flops += cost.attention_bwd_flops(pairs) + cost.linear_bwd_flops(len);
    m.useful_flops += layers * flops;
    m.tokens += len;
  }
  // The LM head's vocabulary GEMM is model work too (Megatron's MFU counts it); padding is never in it.
  m.useful_flops += parts.head_flops;
  if (m.iteration_seconds > 0) {
    m.tokens_per_second = m.tokens / m.iteration_seconds;
    m.model_tflops_per_gpu = m.useful_flops / m.iteration_seconds / n / 1e12;
    m.mfu = m.useful_flops / m.iteration_seconds / n / scenario.cluster.gpu.peak_flops;
  }

  std::vector<TimeBreakdown> per_rank = rank_breakdowns(trace);
  for (std::size_t r = 0; r < per_rank.size(); ++r) {
    TimeBreakdown& b = per_rank[r];
    // Outside the layers: the rank's own embedding and head, the wait for the slowest rank's as idle, and
    // the collectives and optimizer every rank runs alike.
    const double own = r < parts.embedding_and_head.size() ? parts.embedding_and_head[r] : 0.0;
    b.embedding_and_head = own;
    b.idle += std::max(0.0, parts.embedding_and_head_critical - own);
    b.gradient_sync_exposed = parts.gradient_sync_exposed;
    b.optimizer = parts.optimizer;
  }
  for (std::size_t r = 0; r < per_rank.size(); ++r) {
    add_scaled(m.mean_breakdown, per_rank[r], 1.0 / n);
    if (per_rank[r].idle < per_rank[static_cast<std::size_t>(m.critical_rank)].idle)
      m.critical_rank = static_cast<int>(r);
  }
  if (!per_rank.empty()) m.critical_rank_breakdown = per_rank[static_cast<std::size_t>(m.critical_rank)];

  fill_moe_metrics(m, plan, trace, cost.model().layers);

  m.attention_imbalance = max_over_mean(plan::attention_flops_per_rank(plan, cost));
  std::vector<double> tokens;
  for (const auto& l : plan.linear_layout) tokens.push_back(static_cast<double>(l.tokens()));
  m.token_imbalance = max_over_mean(tokens);

  // NICs: tx and rx links of the trace, paired by (node, index); the trace is one layer of each pass, so
  // utilisation over it equals utilisation over the iteration (every layer moves the same bytes).
  const double window = trace.trace_seconds();
  m.timeline_bins = timeline_bins;
  m.timeline_bin_seconds = timeline_bins > 0 ? window / timeline_bins : 0.0;
  for (const auto& l : trace.links) {
    if (l.kind != LinkKind::nic_tx) continue;
    NicMetrics nic;
    nic.node = l.node;
    nic.nic = l.index;
    nic.bandwidth = l.bandwidth;
    for (const auto& rx : trace.links) {
      if (rx.kind != LinkKind::nic_rx || rx.node != l.node || rx.index != l.index) continue;
      const double capacity = l.bandwidth * window;
      nic.tx_bytes = l.bytes * trace.layers;
      nic.rx_bytes = rx.bytes * trace.layers;
      nic.tx_utilization = capacity > 0 ? l.bytes / capacity : 0.0;
      nic.rx_utilization = capacity > 0 ? rx.bytes / capacity : 0.0;
      nic.busy_share = window > 0 ? std::max(l.busy_seconds, rx.busy_seconds) / window : 0.0;
      nic.measured = l.measured;
      if (l.measured && l.expected_bytes >= 0) nic.expected_tx_bytes = l.expected_bytes * trace.layers;
      if (rx.measured && rx.expected_bytes >= 0) nic.expected_rx_bytes = rx.expected_bytes * trace.layers;
      const double bin_capacity = l.bandwidth * m.timeline_bin_seconds;
      for (double b : binned_bytes(l, 0.0, window, timeline_bins))
        nic.tx_timeline.push_back(bin_capacity > 0 ? b / bin_capacity : 0.0);
      for (double b : binned_bytes(rx, 0.0, window, timeline_bins))
        nic.rx_timeline.push_back(bin_capacity > 0 ? b / bin_capacity : 0.0);
      break;
    }
    m.nics.push_back(std::move(nic));
  }
  if (!m.nics.empty()) {
    for (const auto& nic : m.nics) {
      m.nic_utilization_mean +=
          (nic.tx_utilization + nic.rx_utilization) / (2.0 * static_cast<double>(m.nics.size()));
      m.nic_utilization_max = std::max({m.nic_utilization_max, nic.tx_utilization, nic.rx_utilization});
      m.nic_busy_share_mean += nic.busy_share / static_cast<double>(m.nics.size());
      m.nic_busy_share_max = std::max(m.nic_busy_share_max, nic.busy_share);
    }
  }

  m.nvlinks = nvlink_metrics(trace);
  for (const NvlinkMetrics& g : m.nvlinks) {
    m.nvlink_bytes += g.tx_bytes;
    m.nvlink_utilization_mean +=
        (g.tx_utilization + g.rx_utilization) / (2.0 * static_cast<double>(m.nvlinks.size()));
    m.nvlink_utilization_max = std::max({m.nvlink_utilization_max, g.tx_utilization, g.rx_utilization});
  }

  m.ring_steps = trace.ring_step_stats;
  m.predicted_seconds = plan.predicted.iteration_seconds;
  if (m.predicted_seconds > 0 && m.iteration_seconds > 0)
    m.prediction_ratio = m.predicted_seconds / m.iteration_seconds;
  return m;
}

}  // namespace zb
