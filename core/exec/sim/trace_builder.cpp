#include "core/exec/sim/trace_builder.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "core/exec/instr_events.hpp"

namespace zb::sim {

using lower::Instr;
using lower::InstrKind;
using lower::Message;

namespace {

struct TimeSpan {
  double start = std::numeric_limits<double>::infinity();
  double end = 0;
};

// Per message with legs: first byte out of its source to last byte into its destination.
std::vector<TimeSpan> message_spans(const TaskGraph& graph, const TaskTimes& times) {
  const lower::Program& p = graph.program();
  std::vector<TimeSpan> spans(p.messages.size());
  for (int r = 0; r < p.world_size; ++r) {
    const auto& list = p.ranks[static_cast<std::size_t>(r)].instrs;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Instr& in = list[i];
      if (in.kind != InstrKind::send && in.kind != InstrKind::recv) continue;
      const InstrTasks& t = graph.of(r, static_cast<int>(i));
      TimeSpan& span = spans[static_cast<std::size_t>(in.message)];
      const Message& m = p.messages[static_cast<std::size_t>(in.message)];
      if (in.kind == InstrKind::send && r == m.src) {
        const int first =
            t.flows.empty() ? t.done : t.flows.front();  // a chunked leg starts with its first chunk
        span.start = std::min(span.start, times.start[static_cast<std::size_t>(first)]);
      }
      if (in.kind == InstrKind::recv && in.last_leg)
        span.end = std::max(span.end, times.end[static_cast<std::size_t>(t.done)]);
    }
  }
  return spans;
}

void add_instr_events(const TaskGraph& graph, const TaskTimes& times, const std::vector<TimeSpan>& spans,
                      Trace& trace) {
  const lower::Program& p = graph.program();
  std::vector<char> seen(p.messages.size() * 2, 0);  // one send event and one recv event per message
  for (int r = 0; r < p.world_size; ++r) {
    const auto& list = p.ranks[static_cast<std::size_t>(r)].instrs;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Instr& in = list[i];
      const InstrTasks& t = graph.of(r, static_cast<int>(i));
      if (lower::is_compute(in)) {
        TraceEvent e =
            event_of(r, in, Track::compute,
                     in.kind == InstrKind::attention ? EventCategory::attention : EventCategory::gemm);
        e.start = times.start[static_cast<std::size_t>(t.gate)];
        e.end = times.end[static_cast<std::size_t>(t.done)];
        e.flops = in.flops;
        // What it lost to the communication it overlapped (clamped: rounding of the timer dates).
        // The compute task's own amount: the time it was given, jitter included.
        const Task& task = graph.tasks()[static_cast<std::size_t>(t.done)];
        e.interference_seconds = std::max(0.0, (e.end - e.start) - task.amount);
        trace.events.push_back(std::move(e));
      } else if (in.kind == InstrKind::collective) {
        TraceEvent e = event_of(r, in, Track::comm,
                                collective_category(p.collectives[static_cast<std::size_t>(in.collective)]));
        double start = std::numeric_limits<double>::infinity();
        for (const int f : t.flows) start = std::min(start, times.start[static_cast<std::size_t>(f)]);
        e.start = t.flows.empty() ? times.end[static_cast<std::size_t>(t.gate)] : start;
        e.end = times.end[static_cast<std::size_t>(t.done)];
        e.bytes = static_cast<double>(in.bytes);
        trace.events.push_back(std::move(e));
      } else if ((in.kind == InstrKind::send || in.kind == InstrKind::recv) &&
                 in.stream == lower::Stream::comm) {
        // The rank's own transfer: one event per message and end, whatever its legs.
        const Message& m = p.messages[static_cast<std::size_t>(in.message)];
        const bool is_send = in.kind == InstrKind::send;
        char& once = seen[static_cast<std::size_t>(in.message) * 2 + (is_send ? 0 : 1)];
        if (once) continue;
        once = 1;
        TraceEvent e = event_of(r, in, Track::comm, is_send ? EventCategory::send : EventCategory::recv);
        e.start = spans[static_cast<std::size_t>(in.message)].start;
        e.end = spans[static_cast<std::size_t>(in.message)].end;
        e.bytes = static_cast<double>(m.bytes);
        e.peer = is_send ? m.dst : m.src;
        trace.events.push_back(std::move(e));
      }
    }
  }
}

// How many events add_instr_events and add_leg_events will emit (the same rules), so that the events are
// allocated once: grown by doubling, the old and new arrays of a reallocation held up to three times the
// final size at once, the largest allocation of a simulated run at 16k GPUs.
std::size_t event_count(const TaskGraph& graph) {
  const lower::Program& p = graph.program();
  std::vector<char> seen(p.messages.size() * 2, 0);
  std::size_t count = 0;
  for (int r = 0; r < p.world_size; ++r) {
    for (const Instr& in : p.ranks[static_cast<std::size_t>(r)].instrs) {
      if (lower::is_compute(in) || in.kind == InstrKind::collective) {
        ++count;
      } else if ((in.kind == InstrKind::send || in.kind == InstrKind::recv) &&
                 in.stream == lower::Stream::comm) {
        char& once = seen[static_cast<std::size_t>(in.message) * 2 + (in.kind == InstrKind::send ? 0 : 1)];
        if (!once) ++count;
        once = 1;
      }
    }
  }
  for (const FlowInfo& f : graph.flows()) {
    if (f.send_rank >= 0 && p.messages[static_cast<std::size_t>(f.message)].routed) ++count;
  }
  return count;
}

// Legs of routed messages appear on the nic stream of the GPU that pushes them: the source (dispatch),
// the proxy (the NIC leg), the peer proxy (combine).
void add_leg_events(const TaskGraph& graph, const TaskTimes& times, Trace& trace) {
  const lower::Program& p = graph.program();
  for (const FlowInfo& f : graph.flows()) {
    if (f.send_rank < 0) continue;
    const Message& m = p.messages[static_cast<std::size_t>(f.message)];
    if (!m.routed) continue;
    const Instr& send = p.instr(f.send_rank, f.send_instr);
    const Task& task = graph.tasks()[static_cast<std::size_t>(f.task)];
    TraceEvent e = event_of(task.rank, send, Track::nic, leg_category(send.leg));
    e.name = std::string(lower::to_string(m.purpose)) + " " + lower::to_string(send.leg);
    e.op = -1;
    e.start = times.start[static_cast<std::size_t>(f.task)];
    e.end = times.end[static_cast<std::size_t>(f.task)];
    e.bytes = task.amount;
    e.peer = task.dst;
    trace.events.push_back(std::move(e));
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

Trace build_trace(const Platform& platform, const TaskGraph& graph, const TaskTimes& times, int layers) {
  const lower::Program& p = graph.program();
  Trace trace;
  trace.backend = "sim";
  trace.simulator_version = simgrid_version();
  trace.model_note = "simulated by " + trace.simulator_version +
                     " flow model (CM02 max-min bandwidth sharing); compute from the cost model";
  trace.world_size = p.world_size;
  trace.gpus_per_node = p.gpus_per_node;
  trace.layers = layers;
  trace.backward = graph.pass_barrier() >= 0;

  double last = 0;
  for (double t : times.end) last = std::max(last, t);
  trace.layer.forward = trace.backward ? times.end[static_cast<std::size_t>(graph.pass_barrier())] : last;
  trace.layer.backward = trace.backward ? last - trace.layer.forward : 0.0;
  trace.iteration_seconds = layers * (trace.layer.forward + trace.layer.backward);

  const std::vector<TimeSpan> spans = message_spans(graph, times);
  trace.events.reserve(event_count(graph));
  add_instr_events(graph, times, spans, trace);
  add_leg_events(graph, times, trace);
  sort_trace_events(trace.events);

  for (std::size_t mi = 0; mi < p.messages.size(); ++mi) {
    if (!is_ring_step(p.messages[mi]) || !(spans[mi].start <= spans[mi].end)) continue;
    trace.ring_steps.push_back(ring_step_transfer(p, static_cast<int>(mi), spans[mi].start, spans[mi].end));
  }
  trace.ring_step_stats = ring_step_statistics(trace.ring_steps);
  trace.links = link_loads(platform, graph, times);
  return trace;
}

}  // namespace zb::sim
