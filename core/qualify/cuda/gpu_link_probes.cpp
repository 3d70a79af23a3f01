#include "core/qualify/cuda/gpu_link_probes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "core/exec/cuda/cuda_check.hpp"
#include "core/qualify/cuda/gpu_support.hpp"
#include "core/qualify/link_probes.hpp"

namespace zb::qualify::gpu {
namespace {

constexpr std::size_t kSmall = 8;  // latency message
constexpr std::size_t kAck = 4;    // a routed transfer's end: the destination's acknowledgement

// A rank's buffers and stream for every link step (allocated once, before the first).
struct Links {
  cuda::CudaWorld& world;
  const ClusterSpec& cluster;
  const GpuLinkSweep& sweep;
  Stream stream;
  DeviceMemory out, in, small;
  DeviceMemory times;  // the receiver's per-repetition seconds, sent to the sender after a timed transfer

  Links(cuda::CudaWorld& w, const ClusterSpec& c, const GpuLinkSweep& s)
      : world(w),
        cluster(c),
        sweep(s),
        stream(w.rank()),
        out(static_cast<std::size_t>(s.bytes), w.rank(), "qualify links: send buffer"),
        in(static_cast<std::size_t>(s.bytes), w.rank(), "qualify links: receive buffer"),
        small(2 * kSmall, w.rank(), "qualify links: latency buffer"),
        times(sizeof(double) * static_cast<std::size_t>(std::max(s.repetitions, 1)), w.rank(),
              "qualify links: receiver times") {
    out.fill_bf16(7, w.rank());
  }

  void send(const void* data, std::size_t bytes, int peer, const std::string& what) {
    cuda::check_nccl(ncclSend(data, bytes, ncclInt8, peer, world.world(), stream.get()), world.rank(),
                     "ncclSend", what);
  }
  void recv(void* data, std::size_t bytes, int peer, const std::string& what) {
    cuda::check_nccl(ncclRecv(data, bytes, ncclInt8, peer, world.world(), stream.get()), world.rank(),
                     "ncclRecv", what);
  }
  [[nodiscard]] std::string gpu(int rank) const {
    return fmt::format("node {} GPU {}", cluster.node_of(rank), cluster.local_of(rank));
  }
  [[nodiscard]] std::string link(int src, int dst) const { return gpu(src) + " → " + gpu(dst); }
};

// One-way latency seen by `src` (8-byte ping-pongs, one warm-up batch); `dst` answers the same count.
std::optional<double> latency(Links& x, int src, int dst) {
  const std::string what = "qualify latency " + x.link(src, dst);
  const int rounds = x.sweep.round_trips;
  char* small = static_cast<char*>(x.small.get());
  if (x.world.rank() == src) {
    const double seconds = median_seconds(
        x.stream, 1, 1,
        [&] {
          for (int i = 0; i < rounds; ++i)
            x.send(small, kSmall, dst, what), x.recv(small + kSmall, kSmall, dst, what);
        },
        x.world.rank(), what);
    return seconds / (2.0 * rounds);
  }
  for (int i = 0; i < 2 * rounds; ++i) x.recv(small, kSmall, src, what), x.send(small, kSmall, src, what);
  x.stream.synchronize(x.world.rank(), what);
  return std::nullopt;
}

// `bytes` src → dst as nccl-tests time a point-to-point transfer: each end times its own ncclSend or
// ncclRecv between two CUDA events, and a repetition's time is the slower end's (nccl-tests report the
// slowest rank). The figure the caller makes of it, bytes / time, is nccl-tests' algbw, and their busbw
// too (the bus factor of a point-to-point transfer is 1). The median over the repetitions is returned on
// src (docs/QUALIFY.md); dst returns nothing. The receiver's times reach the sender over NCCL, untimed.
std::optional<double> transfer(Links& x, int src, int dst, int warmup, const std::string& what) {
  const auto bytes = static_cast<std::size_t>(x.sweep.bytes);
  const int me = x.world.rank();
  const bool sender = me == src;
  const std::vector<double> mine = event_seconds(
      x.stream, warmup, x.sweep.repetitions,
      [&] { sender ? x.send(x.out.get(), bytes, dst, what) : x.recv(x.in.get(), bytes, src, what); }, me,
      what);
  const std::size_t times_bytes = sizeof(double) * mine.size();
  if (!sender) {
    cuda::check_cuda(cudaMemcpy(x.times.get(), mine.data(), times_bytes, cudaMemcpyHostToDevice), me,
                     "cudaMemcpy", what + " (receiver times)");
    x.send(x.times.get(), times_bytes, src, what + " (receiver times)");
    x.stream.synchronize(me, what);
    return std::nullopt;
  }
  std::vector<double> theirs(mine.size(), 0.0);
  x.recv(x.times.get(), times_bytes, dst, what + " (receiver times)");
  x.stream.synchronize(me, what);
  cuda::check_cuda(cudaMemcpy(theirs.data(), x.times.get(), times_bytes, cudaMemcpyDeviceToHost), me,
                   "cudaMemcpy", what + " (receiver times)");
  std::vector<double> slower(mine.size());
  for (std::size_t r = 0; r < mine.size(); ++r) slower[r] = std::max(mine[r], theirs[r]);
  return median_time(std::move(slower));
}

Measurement link_figure(const Links& x, Probe probe, int src, int dst, double seconds) {
  const ClusterSpec& c = x.cluster;
  Measurement m{.probe = probe,
                .subject = x.link(src, dst),
                .shape = transfer_shape_label(x.sweep.bytes),
                .node = c.node_of(src),
                .gpu = c.local_of(src),
                .peer_node = c.node_of(dst),
                .peer_gpu = c.local_of(dst),
                .value = static_cast<double>(x.sweep.bytes) / seconds};
  if (probe != Probe::p2p_intra) {
    m.nic = c.nic_of(src);
    m.subject += fmt::format(" (NIC {}{})", m.nic, probe == Probe::all_rails ? ", all at once" : "");
  }
  return m;
}

void pair_step(Links& x, Probe probe, int src, int dst, std::vector<Measurement>& out) {
  const int me = x.world.rank();
  if (me == src || me == dst) {
    const std::string what = fmt::format("qualify {} {}", to_string(probe), x.link(src, dst));
    const std::optional<double> one_way = latency(x, src, dst);
    const std::optional<double> seconds = transfer(x, src, dst, x.sweep.warmup, what);
    if (seconds) {
      out.push_back(link_figure(x, probe, src, dst, *seconds));
      out.back().latency = *one_way;
    }
  }
  device_barrier(x.world);
}

// Warm-ups of every pair first, then a barrier, then the timed transfers of every pair at once.
void all_rails_step(Links& x, int node, std::vector<Measurement>& out) {
  const int me = x.world.rank(), g = x.cluster.gpus_per_node;
  const bool sender = x.cluster.node_of(me) == node, receiver = x.cluster.node_of(me) == node + 1;
  const int src = sender ? me : me - g, dst = src + g;
  const std::string what = "qualify all-rails " + x.link(src, dst);
  if (sender || receiver) static_cast<void>(transfer(x, src, dst, 0, what + " (warm-up)"));
  device_barrier(x.world);
  if (sender || receiver)
    if (const std::optional<double> seconds = transfer(x, src, dst, 0, what))
      out.push_back(link_figure(x, Probe::all_rails, src, dst, *seconds));
  device_barrier(x.world);
}

// One routed transfer: chunk k of a path crosses hop h (path[h] → path[h+1]) in round k + h, so a proxy
// forwards a chunk in the round after it arrived (stream order keeps that safe) while receiving the
// next; every rank groups its calls of a round, and matching calls sit in the same round on both ends.
void routed_rounds(Links& x, const std::vector<std::vector<int>>& paths, std::int64_t chunks,
                   std::int64_t chunk, const std::string& what) {
  const int me = x.world.rank();
  std::size_t longest = 0;
  for (const auto& path : paths) longest = std::max(longest, path.size());
  const std::int64_t rounds = chunks + static_cast<std::int64_t>(longest) - 2;
  for (std::int64_t r = 0; r < rounds; ++r) {
    bool grouped = false;
    for (std::size_t p = 0; p < paths.size(); ++p) {
      const auto at = std::find(paths[p].begin(), paths[p].end(), me);
      if (at == paths[p].end()) continue;
      const auto i = static_cast<std::int64_t>(at - paths[p].begin());
      const auto offset = [&](std::int64_t k) {
        return static_cast<std::size_t>((static_cast<std::int64_t>(p) * chunks + k) * chunk);
      };
      const std::int64_t incoming = r - (i - 1), outgoing = r - i;
      const bool receives = i > 0 && incoming >= 0 && incoming < chunks;
      const bool sends =
          i + 1 < static_cast<std::int64_t>(paths[p].size()) && outgoing >= 0 && outgoing < chunks;
      if ((receives || sends) && !grouped)
        grouped = true, cuda::check_nccl(ncclGroupStart(), me, "ncclGroupStart", what);
      if (receives)
        x.recv(static_cast<char*>(x.in.get()) + offset(incoming), static_cast<std::size_t>(chunk),
               paths[p][i - 1], what);
      if (sends) {
        const char* from = static_cast<const char*>(i == 0 ? x.out.get() : x.in.get());
        x.send(from + offset(outgoing), static_cast<std::size_t>(chunk), paths[p][i + 1], what);
      }
    }
    if (grouped) cuda::check_nccl(ncclGroupEnd(), me, "ncclGroupEnd", what);
  }
}

void routed_step(Links& x, std::vector<Measurement>& out) {
  const std::vector<std::vector<int>> paths = routed_paths(x.cluster);
  const int me = x.world.rank(), src = 0, dst = x.cluster.gpus_per_node;
  const auto parts = static_cast<std::int64_t>(paths.size());
  const std::int64_t chunk = std::min(x.sweep.routed_chunk, x.sweep.bytes / parts);
  const std::int64_t chunks = std::max<std::int64_t>(1, x.sweep.bytes / parts / chunk);
  const std::string what = fmt::format("qualify routed {} over {} NICs", x.link(src, dst), parts);
  char* ack = static_cast<char*>(x.small.get());
  const auto one_transfer = [&] {
    routed_rounds(x, paths, chunks, chunk, what);
    if (me == dst) x.send(ack, kAck, src, what);
    if (me == src) x.recv(ack, kAck, dst, what);
  };
  if (me == src) {
    const double seconds =
        median_seconds(x.stream, x.sweep.warmup, x.sweep.repetitions, one_transfer, me, what);
    out.push_back({.probe = Probe::routed,
                   .subject = fmt::format("{} over {} NICs", x.link(src, dst), parts),
                   .shape = transfer_shape_label(x.sweep.bytes),
                   .node = 0,
                   .gpu = 0,
                   .peer_node = 1,
                   .peer_gpu = 0,
                   .value = static_cast<double>(chunks * parts * chunk) / seconds});
  } else {
    for (int i = 0; i < x.sweep.warmup + x.sweep.repetitions; ++i) one_transfer();
    x.stream.synchronize(me, what);
  }
  device_barrier(x.world);
}

}  // namespace

void device_barrier(cuda::CudaWorld& world) {
  const int rank = world.rank();
  cuda::check_cuda(cudaDeviceSynchronize(), rank, "cudaDeviceSynchronize", "qualify: barrier between steps");
  const Stream stream(rank);
  const DeviceMemory token(sizeof(int), rank, "qualify: barrier token");
  cuda::check_nccl(
      ncclAllReduce(token.get(), token.get(), 1, ncclInt32, ncclSum, world.world(), stream.get()), rank,
      "ncclAllReduce", "qualify: barrier between steps");
  stream.synchronize(rank, "qualify: barrier between steps");
}

std::vector<Measurement> run_gpu_link_probes(cuda::CudaWorld& world, const ClusterSpec& c,
                                             const GpuLinkSweep& sweep) {
  validate(sweep);
  Links x(world, c, sweep);
  std::vector<Measurement> out;
  const int g = c.gpus_per_node;
  device_barrier(world);
  if (g > 1)
    for (int n = 0; n < c.nodes; ++n)
      for (int local = 0; local < g; ++local)
        pair_step(x, Probe::p2p_intra, n * g + local, n * g + (local + 1) % g, out);
  for (int n = 0; n + 1 < c.nodes; ++n)
    for (int local = 0; local < g; ++local)
      pair_step(x, Probe::p2p_rail, n * g + local, (n + 1) * g + local, out);
  for (int n = 0; n + 1 < c.nodes; ++n) all_rails_step(x, n, out);
  if (c.nodes > 1) routed_step(x, out);
  return out;
}

}  // namespace zb::qualify::gpu

namespace zb::qualify::gpu {

std::vector<TransferPoint> message_times(cuda::CudaWorld& world, int a, int b,
                                         const std::vector<std::int64_t>& sizes, int warmup,
                                         int repetitions) {
  std::vector<TransferPoint> points;
  const int me = world.rank();
  if (me == a || me == b) {
    const std::int64_t largest = *std::max_element(sizes.begin(), sizes.end());
    const int peer = me == a ? b : a;
    const Stream stream(me);
    DeviceMemory there(static_cast<std::size_t>(largest), me, "calibrate: message buffer"),
        back(static_cast<std::size_t>(largest), me, "calibrate: reply buffer");
    there.fill_bf16(8, me);
    for (const std::int64_t bytes : sizes) {
      const std::string what =
          fmt::format("calibrate: {} message rank {} ↔ rank {}", transfer_shape_label(bytes), a, b);
      const auto size = static_cast<std::size_t>(bytes);
      const auto call = [&](bool sending, void* data) {
        const ncclResult_t code = sending ? ncclSend(data, size, ncclInt8, peer, world.world(), stream.get())
                                          : ncclRecv(data, size, ncclInt8, peer, world.world(), stream.get());
        cuda::check_nccl(code, me, sending ? "ncclSend" : "ncclRecv", what);
      };
      if (me == a) {
        const double round_trip = median_seconds(
            stream, warmup, repetitions, [&] { call(true, there.get()), call(false, back.get()); }, me, what);
        points.push_back({static_cast<double>(bytes), round_trip / 2});
      } else {
        for (int i = 0; i < warmup + repetitions; ++i) call(false, back.get()), call(true, back.get());
        stream.synchronize(me, what);
      }
    }
  }
  device_barrier(world);
  return points;
}

}  // namespace zb::qualify::gpu
