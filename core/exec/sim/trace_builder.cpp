#include "core/exec/sim/trace_builder.hpp"

#include <algorithm>
#include <limits>
#include <tuple>

namespace zb::sim {

using plan::OpKind;

namespace {

struct TimeSpan {
  double start = std::numeric_limits<double>::infinity();
  double end = 0;
};

// First byte out to last byte in over a set of flows; `fallback` (a join's time) when there are none.
TimeSpan flow_span(const std::vector<int>& flows, const TaskTimes& times, int fallback) {
  TimeSpan span;
  for (int f : flows) {
    span.start = std::min(span.start, times.start[static_cast<std::size_t>(f)]);
    span.end = std::max(span.end, times.end[static_cast<std::size_t>(f)]);
  }
  if (flows.empty()) span.start = span.end = times.end[static_cast<std::size_t>(fallback)];
  return span;
}

const char* leg_label(EventCategory c) {
  switch (c) {
    case EventCategory::route_dispatch: return "dispatch";
    case EventCategory::route_nic: return "nic";
    default: return "combine";
  }
}

void add_op_events(const plan::Plan& plan, const TaskGraph& graph, const TaskTimes& times, Trace& trace) {
  for (const OpTasks& ot : graph.ops()) {
    const plan::Op& op = plan.ranks[static_cast<std::size_t>(ot.rank)].ops[static_cast<std::size_t>(ot.op)];
    TraceEvent e;
    e.rank = ot.rank;
    e.name = op.name;
    e.pass = ot.pass;
    e.micro_batch = op.micro_batch;
    e.op = ot.op;
    e.group = op.group;
    e.step = op.step;
    if (op.kind == OpKind::attention || op.kind == OpKind::gemm) {
      e.stream = Stream::compute;
      e.category = op.kind == OpKind::attention ? EventCategory::attention : EventCategory::gemm;
      e.start = times.start[static_cast<std::size_t>(ot.gate)];
      e.end = times.end[static_cast<std::size_t>(ot.done)];
      e.flops = ot.flops;
    } else if (op.kind == OpKind::remap) {
      e.stream = Stream::comm;
      e.category = EventCategory::remap;
      const TimeSpan span = flow_span(ot.flows, times, ot.gate);
      e.start = span.start;
      e.end = times.end[static_cast<std::size_t>(ot.done)];
      e.bytes = static_cast<double>(op.bytes_out + op.bytes_in);
    } else {
      const Transfer& t = graph.transfers()[static_cast<std::size_t>(ot.transfer)];
      e.stream = Stream::comm;
      e.category = op.kind == OpKind::send ? EventCategory::send : EventCategory::recv;
      e.start = flow_span(t.flows, times, t.rendezvous).start;
      e.end = times.end[static_cast<std::size_t>(t.done)];
      e.bytes = t.bytes;
      e.peer = op.peer;
    }
    trace.events.push_back(std::move(e));
  }
}

// Routing legs appear on the nic stream of the GPU that pushes them (the source, a proxy, a peer proxy).
void add_leg_events(const plan::Plan& plan, const TaskGraph& graph, const TaskTimes& times, Trace& trace) {
  for (const Transfer& t : graph.transfers()) {
    const plan::Op& send = plan.ranks[static_cast<std::size_t>(t.src)].ops[static_cast<std::size_t>(t.send_op)];
    for (int f : t.flows) {
      const Task& task = graph.tasks()[static_cast<std::size_t>(f)];
      if (task.kind != TaskKind::flow) continue;
      const auto info = std::lower_bound(graph.flows().begin(), graph.flows().end(), f,
                                         [](const FlowInfo& a, int id) { return a.task < id; });
      if (info == graph.flows().end() || info->category == EventCategory::send) continue;
      TraceEvent e;
      e.rank = task.rank;
      e.stream = Stream::nic;
      e.name = send.name + " " + leg_label(info->category);
      e.category = info->category;
      e.pass = t.pass;
      e.micro_batch = t.micro_batch;
      e.start = times.start[static_cast<std::size_t>(f)];
      e.end = times.end[static_cast<std::size_t>(f)];
      e.bytes = task.amount;
      e.peer = task.dst;
      e.group = t.group;
      e.step = t.step;
      trace.events.push_back(std::move(e));
    }
  }
}

}  // namespace

std::vector<LinkLoad> link_loads(const Platform& platform, const TaskGraph& graph, const TaskTimes& times) {
  struct Change {
    double t;
    double rate;
    int flows;
  };
  const auto& plinks = platform.links();
  std::vector<std::vector<Change>> changes(plinks.size());
  std::vector<double> bytes(plinks.size(), 0.0);
  for (const FlowInfo& info : graph.flows()) {
    const Task& task = graph.tasks()[static_cast<std::size_t>(info.task)];
    const double start = times.start[static_cast<std::size_t>(info.task)];
    const double end = times.end[static_cast<std::size_t>(info.task)];
    double from = start + platform.route_latency(task.rank, task.dst);
    if (!(end > from)) from = start;
    if (!(end > from)) continue;
    const double rate = task.amount / (end - from);
    for (int l : platform.route(task.rank, task.dst)) {
      changes[static_cast<std::size_t>(l)].push_back({from, rate, 1});
      changes[static_cast<std::size_t>(l)].push_back({end, -rate, -1});
      bytes[static_cast<std::size_t>(l)] += task.amount;
    }
  }
  std::vector<LinkLoad> loads;
  for (std::size_t l = 0; l < plinks.size(); ++l) {
    LinkLoad load;
    load.name = plinks[l].name;
    load.kind = plinks[l].kind;
    load.node = plinks[l].node;
    load.index = plinks[l].index;
    load.bandwidth = plinks[l].nominal_bandwidth;
    load.bytes = bytes[l];
    auto& c = changes[l];
    std::stable_sort(c.begin(), c.end(), [](const Change& a, const Change& b) { return a.t < b.t; });
    double rate = 0;
    int active = 0;
    for (std::size_t i = 0; i < c.size();) {
      const double t = c[i].t;
      for (; i < c.size() && c[i].t == t; ++i) {
        rate += c[i].rate;
        active += c[i].flows;
      }
      if (active == 0) rate = 0;  // no rounding residue once the link is idle
      if (!load.series.empty() && load.series.back().bytes_per_second > 0) {
        load.busy_seconds += t - load.series.back().t;
      }
      if (!load.series.empty() && load.series.back().bytes_per_second == rate) continue;
      load.series.push_back({t, rate});
    }
    loads.push_back(std::move(load));
  }
  return loads;
}

Trace build_trace(const plan::Plan& plan, const Platform& platform, const TaskGraph& graph, const TaskTimes& times,
                  int layers) {
  Trace trace;
  trace.backend = "sim";
  trace.simulator_version = simgrid_version();
  trace.model_note = "simulated by " + trace.simulator_version +
                     " flow model (CM02 max-min bandwidth sharing); compute from the cost model";
  trace.world_size = plan.world_size;
  trace.gpus_per_node = plan.gpus_per_node;
  trace.layers = layers;
  trace.backward = graph.pass_barrier() >= 0;

  double last = 0;
  for (double t : times.end) last = std::max(last, t);
  trace.layer.forward = trace.backward ? times.end[static_cast<std::size_t>(graph.pass_barrier())] : last;
  trace.layer.backward = trace.backward ? last - trace.layer.forward : 0.0;
  trace.iteration_seconds = layers * (trace.layer.forward + trace.layer.backward);

  add_op_events(plan, graph, times, trace);
  add_leg_events(plan, graph, times, trace);
  std::stable_sort(trace.events.begin(), trace.events.end(), [](const TraceEvent& a, const TraceEvent& b) {
    return std::tie(a.pass, a.rank, a.stream, a.start, a.op) < std::tie(b.pass, b.rank, b.stream, b.start, b.op);
  });

  for (const Transfer& t : graph.transfers()) {
    if (t.group < 0 || t.step < 0 || t.flows.empty()) continue;
    const TimeSpan span = flow_span(t.flows, times, t.rendezvous);
    RingStepTransfer r;
    r.group = t.group;
    r.step = t.step;
    r.group_level = plan.groups.at(static_cast<std::size_t>(t.group)).level;
    r.level = t.src / plan.gpus_per_node == t.dst / plan.gpus_per_node ? plan::Level::intra_node : plan::Level::inter_node;
    r.pass = t.pass;
    r.micro_batch = t.micro_batch;
    r.src = t.src;
    r.dst = t.dst;
    r.bytes = t.bytes;
    r.start = span.start;
    r.end = span.end;
    trace.ring_steps.push_back(r);
  }
  trace.ring_step_stats = ring_step_statistics(trace.ring_steps);
  trace.links = link_loads(platform, graph, times);
  return trace;
}

}  // namespace zb::sim
