#include "core/exec/trace.hpp"

#include <algorithm>
#include <cstddef>

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

std::vector<RingStepStats> ring_step_statistics(const std::vector<RingStepTransfer>& transfers) {
  std::vector<RingStepStats> stats;
  const plan::Level levels[] = {plan::Level::local, plan::Level::intra_node, plan::Level::inter_node};
  const Pass passes[] = {Pass::fwd, Pass::bwd};
  for (const plan::Level level : levels) {
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

const char* to_string(Stream s) {
  switch (s) {
    case Stream::compute:
      return "compute";
    case Stream::comm:
      return "comm";
    case Stream::nic:
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
