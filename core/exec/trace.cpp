#include "core/exec/trace.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <tuple>

namespace zb {

std::vector<double> binned_bytes(const LinkLoad& link, double t0, double t1, int bins) {
  std::vector<double> out(static_cast<std::size_t>(std::max(bins, 0)), 0.0);
  if (bins <= 0 || !(t1 > t0)) return out;
  const double width = (t1 - t0) / bins;
  // Each constant piece [a, b) of the series adds rate·overlap to every bin it overlaps.
  for (std::size_t i = 0; i + 1 < link.series.size(); ++i) {
    const double rate = link.series[i].bytes_per_second;
    if (rate == 0) continue;
    const double a = std::max(link.series[i].t, t0);
    const double b = std::min(link.series[i + 1].t, t1);
    if (!(b > a)) continue;
    auto first = static_cast<int>((a - t0) / width);
    first = std::clamp(first, 0, bins - 1);
    for (int bin = first; bin < bins; ++bin) {
      const double lo = t0 + bin * width;
      const double hi = bin + 1 == bins ? t1 : lo + width;
      if (lo >= b) break;
      const double overlap = std::min(b, hi) - std::max(a, lo);
      if (overlap > 0) out[static_cast<std::size_t>(bin)] += rate * overlap;
    }
  }
  return out;
}

// Orders the events by (pass, rank, track, start, op), ties in emission order: what std::stable_sort on
// the events gives, but sorting 4-byte indices and then permuting the events in place, where stable_sort
// on the events borrowed a buffer of half of them.
void sort_trace_events(std::vector<TraceEvent>& events) {
  const auto key = [](const TraceEvent& a, const TraceEvent& b) {
    return std::tie(a.pass, a.rank, a.track, a.start, a.op) <
           std::tie(b.pass, b.rank, b.track, b.start, b.op);
  };
  if (events.size() > std::numeric_limits<std::uint32_t>::max()) {
    std::stable_sort(events.begin(), events.end(), key);
    return;
  }
  std::vector<std::uint32_t> order(events.size());
  std::iota(order.begin(), order.end(), 0U);
  std::stable_sort(order.begin(), order.end(),
                   [&events, &key](std::uint32_t x, std::uint32_t y) { return key(events[x], events[y]); });
  // Position i takes the event now at order[i]; each cycle of the permutation is walked once, and a
  // placed position is marked by order[i] == i.
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (order[i] == i) continue;
    TraceEvent held = std::move(events[i]);
    std::size_t j = i;
    for (;;) {
      const std::size_t from = order[j];
      order[j] = static_cast<std::uint32_t>(j);
      if (from == i) {
        events[j] = std::move(held);
        break;
      }
      events[j] = std::move(events[from]);
      j = from;
    }
  }
}

bool is_ring_step(const lower::Message& m) {
  return (m.purpose == lower::Purpose::kv || m.purpose == lower::Purpose::dkv) && m.group >= 0 && m.step >= 0;
}

RingStepTransfer ring_step_transfer(const lower::Program& program, int message, double start, double end) {
  const lower::Message& m = program.messages.at(static_cast<std::size_t>(message));
  RingStepTransfer r;
  r.group = m.group;
  r.step = m.step;
  // A Program built without its plan's groups (by hand, in tests) says nothing of the class: intra-node.
  r.group_level = static_cast<std::size_t>(m.group) < program.groups.size()
                      ? program.groups[static_cast<std::size_t>(m.group)].level
                      : layout::Level::intra_node;
  r.level = m.src / program.gpus_per_node == m.dst / program.gpus_per_node ? layout::Level::intra_node
                                                                           : layout::Level::inter_node;
  r.pass = m.pass;
  r.micro_batch = m.micro_batch;
  r.src = m.src;
  r.dst = m.dst;
  r.bytes = static_cast<double>(m.bytes);
  r.start = start;
  r.end = end;
  return r;
}

std::vector<RingStepStats> ring_step_statistics(const std::vector<RingStepTransfer>& transfers) {
  std::vector<RingStepStats> stats;
  const layout::Level levels[] = {layout::Level::local, layout::Level::intra_node, layout::Level::inter_node};
  const Pass passes[] = {Pass::fwd, Pass::bwd};
  for (const layout::Level level : levels) {
    for (const Pass pass : passes) {
      std::vector<double> seconds;
      for (const auto& t : transfers) {
        if (t.level == level && t.pass == pass) seconds.push_back(t.seconds());
      }
      if (seconds.empty()) continue;
      std::sort(seconds.begin(), seconds.end());
      RingStepStats s;
      s.level = level;
      s.pass = pass;
      s.count = static_cast<int>(seconds.size());
      double sum = 0;
      for (double v : seconds) sum += v;  // ascending order: the same sum on every run
      s.mean_seconds = sum / static_cast<double>(seconds.size());
      // Lower median: an element of the data, so it is exact and needs no interpolation convention.
      s.p50_seconds = seconds[(seconds.size() - 1) / 2];
      s.max_seconds = seconds.back();
      stats.push_back(s);
    }
  }
  return stats;
}

const char* to_string(Track s) {
  switch (s) {
    case Track::compute:
      return "compute";
    case Track::comm:
      return "comm";
    case Track::nic:
      return "nic";
  }
  return "?";
}

const char* to_string(EventCategory c) {
  switch (c) {
    case EventCategory::attention:
      return "attention";
    case EventCategory::gemm:
      return "gemm";
    case EventCategory::send:
      return "send";
    case EventCategory::recv:
      return "recv";
    case EventCategory::remap:
      return "remap";
    case EventCategory::route_dispatch:
      return "route-dispatch";
    case EventCategory::route_nic:
      return "route-nic";
    case EventCategory::route_combine:
      return "route-combine";
    case EventCategory::collective:
      return "collective";
    case EventCategory::tensor_parallel:
      return "tensor-parallel";
  }
  return "?";
}

const char* to_string(LinkKind k) {
  switch (k) {
    case LinkKind::nvlink_out:
      return "nvlink-out";
    case LinkKind::nvlink_in:
      return "nvlink-in";
    case LinkKind::nic_tx:
      return "nic-tx";
    case LinkKind::nic_rx:
      return "nic-rx";
    case LinkKind::pcie:
      return "pcie";
    case LinkKind::core:
      return "core";
  }
  return "?";
}

const char* to_string(DeviceActivityKind k) {
  switch (k) {
    case DeviceActivityKind::kernel:
      return "kernel";
    case DeviceActivityKind::nccl_kernel:
      return "nccl kernel";
    case DeviceActivityKind::memcpy:
      return "memcpy";
    case DeviceActivityKind::memset:
      return "memset";
  }
  return "?";
}

}  // namespace zb
