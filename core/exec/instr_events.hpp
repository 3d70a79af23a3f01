#pragma once
// How an executor names an instruction in its Trace: the event fields every backend copies from the
// instruction, and the category of a relay leg and of a collective. Header-only, so that the cuda
// backend's pure half (zb_exec_cuda_order) uses it without linking zb_exec.
#include "core/exec/trace.hpp"
#include "core/lower/program.hpp"

namespace zb {

// An event of `in` on `rank`: name, pass, micro-batch, plan op, group and step from the instruction;
// times, bytes, FLOPs and peer are the executor's to fill.
inline TraceEvent event_of(int rank, const lower::Instr& in, Track track, EventCategory category) {
  TraceEvent e;
  e.rank = rank;
  e.track = track;
  e.name = in.name;
  e.category = category;
  e.pass = in.pass;
  e.micro_batch = in.micro_batch;
  e.op = in.plan_op;
  e.group = in.group;
  e.step = in.step;
  return e;
}

// A relay leg's place in the routing layer: to the proxy, across the NIC, or from the far proxy.
inline EventCategory leg_category(lower::LegRole role) {
  switch (role) {
    case lower::LegRole::dispatch:
      return EventCategory::route_dispatch;
    case lower::LegRole::combine:
      return EventCategory::route_combine;
    default:
      return EventCategory::route_nic;
  }
}

// remap (the all_to_all_v), tensor_parallel (an all-gather or reduce-scatter of hidden rows, which names
// no CP group) or collective (any other: a K/V all-gather of a CP group, gradient all-reduces).
inline EventCategory collective_category(const lower::Collective& c) {
  if (c.kind == lower::CollectiveKind::all_to_all_v) return EventCategory::remap;
  const bool hidden_rows = c.group < 0 && (c.kind == lower::CollectiveKind::all_gather ||
                                           c.kind == lower::CollectiveKind::reduce_scatter);
  return hidden_rows ? EventCategory::tensor_parallel : EventCategory::collective;
}

}  // namespace zb
