#include "core/exec/cuda/trace_events.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "core/exec/instr_events.hpp"

namespace zb::cuda {

using lower::Instr;
using lower::InstrKind;

namespace {

// The shared event of the instruction (core/exec/instr_events.hpp), at the times the GPU measured.
TraceEvent timed_event(int rank, const Instr& in, Track track, EventCategory category, double start,
                       double end) {
  TraceEvent e = event_of(rank, in, track, category);
  e.start = start;
  e.end = end;
  return e;
}

}  // namespace

void add_pass_events(const lower::Program& program, const GlobalOrder& order, int rank, Pass pass,
                     const PassTimes& times, double offset, RankRecord& record) {
  const auto& items = order.issue.at(static_cast<std::size_t>(rank));
  const auto first = static_cast<std::size_t>(
      pass == Pass::fwd ? 0 : order.first_backward_item.at(static_cast<std::size_t>(rank)));
  const std::size_t last =
      pass == Pass::fwd
          ? static_cast<std::size_t>(order.first_backward_item.at(static_cast<std::size_t>(rank)))
          : items.size();
  std::map<std::pair<int, bool>, std::size_t> message_event;  // (message, is send) → index in record.events
  std::map<int, MessageSpan> spans;
  for (std::size_t k = first; k < last; ++k) {
    const IssueItem& item = items[k];
    const double start = offset + times.start.at(k - first), end = offset + times.end.at(k - first);
    if (item.compute) {
      const Instr& in = program.instr(rank, item.instr);
      TraceEvent e = timed_event(
          rank, in, Track::compute,
          in.kind == InstrKind::attention ? EventCategory::attention : EventCategory::gemm, start, end);
      e.flops = in.flops;
      record.events.push_back(std::move(e));
      continue;
    }
    for (const NcclCall& call : item.calls) {
      const Instr& in = program.instr(rank, call.instr);
      if (call.kind == CallKind::collective) {
        TraceEvent e = timed_event(
            rank, in, Track::comm,
            collective_category(program.collectives[static_cast<std::size_t>(call.collective)]), start, end);
        e.bytes = static_cast<double>(in.bytes);
        record.events.push_back(std::move(e));
        continue;
      }
      const lower::Message& m = program.messages[static_cast<std::size_t>(in.message)];
      const bool is_send = call.kind == CallKind::send;
      if (is_send && rank == m.src) {
        MessageSpan& s = spans.try_emplace(in.message, MessageSpan{in.message, start, -1}).first->second;
        s.start = s.start < 0 ? start : std::min(s.start, start);
      }
      if (!is_send && in.last_leg) {
        MessageSpan& s = spans.try_emplace(in.message, MessageSpan{in.message, -1, end}).first->second;
        s.end = std::max(s.end, end);
      }
      if (m.routed && is_send) {  // a leg of a routed message, on the GPU that pushes it
        TraceEvent e = timed_event(rank, in, Track::nic, leg_category(in.leg), start, end);
        e.name = std::string(lower::to_string(m.purpose)) + " " + lower::to_string(in.leg);
        e.op = -1;
        e.bytes = static_cast<double>(in.bytes);
        e.peer = in.peer;
        record.events.push_back(std::move(e));
      }
      if (in.stream != lower::Stream::comm) continue;
      // The rank's own transfer: one event per message and end, whatever its legs.
      const auto [it, fresh] = message_event.try_emplace({in.message, is_send}, record.events.size());
      if (!fresh) {
        TraceEvent& e = record.events[it->second];
        e.start = std::min(e.start, start);
        e.end = std::max(e.end, end);
        continue;
      }
      TraceEvent e =
          timed_event(rank, in, Track::comm, is_send ? EventCategory::send : EventCategory::recv, start, end);
      e.bytes = static_cast<double>(m.bytes);
      e.peer = is_send ? m.dst : m.src;
      record.events.push_back(std::move(e));
    }
  }
  for (const auto& [message, span] : spans) record.spans.push_back(span);
}

void assemble_trace(const lower::Program& program, const std::vector<RankRecord>& records, Trace& trace) {
  std::map<int, MessageSpan> spans;
  for (const RankRecord& r : records) {
    trace.events.insert(trace.events.end(), r.events.begin(), r.events.end());
    for (const MessageSpan& s : r.spans) {
      MessageSpan& into = spans.try_emplace(s.message, MessageSpan{s.message, -1, -1}).first->second;
      if (s.start >= 0) into.start = into.start < 0 ? s.start : std::min(into.start, s.start);
      into.end = std::max(into.end, s.end);
    }
  }
  sort_trace_events(trace.events);
  for (const RankRecord& r : records) {
    trace.device_activity.insert(trace.device_activity.end(), r.activity.begin(), r.activity.end());
    trace.links.insert(trace.links.end(), r.links.begin(), r.links.end());
  }
  std::stable_sort(trace.device_activity.begin(), trace.device_activity.end(),
                   [](const DeviceActivity& a, const DeviceActivity& b) {
                     return std::tie(a.pass, a.rank, a.cuda_stream, a.start) <
                            std::tie(b.pass, b.rank, b.cuda_stream, b.start);
                   });
  trace.ring_steps.clear();
  for (const auto& [mi, span] : spans) {
    if (!is_ring_step(program.messages[static_cast<std::size_t>(mi)]) || span.start < 0 || span.end < 0)
      continue;
    // Two GPUs' clocks, aligned by the barrier to within its skew: the end is at least the start.
    trace.ring_steps.push_back(ring_step_transfer(program, mi, span.start, std::max(span.start, span.end)));
  }
}

std::string distinct_notes(const std::vector<RankRecord>& records) {
  std::vector<std::string> seen;
  std::string joined;
  for (const RankRecord& r : records) {
    for (const std::string& note : r.notes) {
      if (std::find(seen.begin(), seen.end(), note) != seen.end()) continue;
      seen.push_back(note);
      joined += (joined.empty() ? "" : "; ") + note;
    }
  }
  return joined;
}

}  // namespace zb::cuda
