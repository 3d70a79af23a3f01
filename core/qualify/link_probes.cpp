#include "core/qualify/link_probes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

namespace zb::qualify {
namespace {

using reference::Bytes;
using reference::MessageKind;
using reference::Tag;
using reference::Transport;
using Clock = std::chrono::steady_clock;

// Tags: each step owns a range of ids, so nothing of one step can be taken for another's.
Tag tag(std::uint64_t step, std::uint64_t slot) {
  return Tag::make(MessageKind::transfer, step * 1024 + slot);
}
constexpr std::uint64_t kData = 0, kAck = 1, kPing = 2, kPong = 3, kRouted = 16;

struct Steps {
  std::uint64_t next = 1;
  std::uint64_t take() { return next++; }
};

std::string gpu_name(const ClusterSpec& c, int rank) {
  return fmt::format("node {} GPU {}", c.node_of(rank), c.local_of(rank));
}

std::string size_text(std::int64_t bytes) {
  return fmt::format("{} MiB", bytes >> 20);
}

// Sender side of one timed transfer; returns seconds from the first send to the acknowledgement.
double send_timed(Transport& t, int dst, std::uint64_t step, const LinkShapes& s) {
  const Bytes chunk(static_cast<std::size_t>(s.chunk));
  const std::int64_t count = std::max<std::int64_t>(1, s.bytes / s.chunk);
  const auto start = Clock::now();
  for (std::int64_t i = 0; i < count; ++i) t.send(dst, tag(step, kData), chunk);
  (void)t.recv(dst, tag(step, kAck), s.timeout);
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void receive_timed(Transport& t, int src, std::uint64_t step, const LinkShapes& s) {
  const std::int64_t count = std::max<std::int64_t>(1, s.bytes / s.chunk);
  for (std::int64_t i = 0; i < count; ++i) (void)t.recv(src, tag(step, kData), s.timeout);
  t.send(src, tag(step, kAck), {});
}

double ping(Transport& t, int peer, std::uint64_t step, const LinkShapes& s) {
  const Bytes small(8);
  t.send(peer, tag(step, kPing), small);  // warm-up: opens the connection both ways
  (void)t.recv(peer, tag(step, kPong), s.timeout);
  const auto start = Clock::now();
  for (int i = 0; i < s.round_trips; ++i) {
    t.send(peer, tag(step, kPing), small);
    (void)t.recv(peer, tag(step, kPong), s.timeout);
  }
  return std::chrono::duration<double>(Clock::now() - start).count() / (2.0 * s.round_trips);
}

void pong(Transport& t, int peer, std::uint64_t step, const LinkShapes& s) {
  for (int i = 0; i < s.round_trips + 1; ++i) {
    Bytes got = t.recv(peer, tag(step, kPing), s.timeout);
    t.send(peer, tag(step, kPong), std::move(got));
  }
}

// One pair per step: latency then bandwidth, reported by the sender.
void pair_step(Transport& t, const ClusterSpec& c, const LinkShapes& s, Steps& steps, Probe probe, int src,
               int dst, std::vector<Measurement>& out) {
  const std::uint64_t step = steps.take();
  const int me = t.rank();
  if (me == src) {
    const double latency = ping(t, dst, step, s);
    // One untimed transfer of the full size first: the first bulk transfer on a connection pays for its
    // buffers growing (TCP autotuning on the emulated cluster), which is not the link's rate.
    (void)send_timed(t, dst, step, s);
    const double seconds = send_timed(t, dst, step, s);
    Measurement m{.probe = probe,
                  .subject = gpu_name(c, src) + " → " + gpu_name(c, dst),
                  .shape = size_text(s.bytes),
                  .node = c.node_of(src),
                  .gpu = c.local_of(src),
                  .peer_node = c.node_of(dst),
                  .peer_gpu = c.local_of(dst),
                  .value = static_cast<double>(std::max(s.bytes, s.chunk)) / seconds,
                  .latency = latency};
    if (probe != Probe::p2p_intra) {
      m.nic = c.nic_of(src);
      m.subject += fmt::format(" (NIC {})", m.nic);
    }
    out.push_back(std::move(m));
  } else if (me == dst) {
    pong(t, src, step, s);
    receive_timed(t, src, step, s);
    receive_timed(t, src, step, s);
  }
  barrier(t, step, s.timeout);
}

void all_rails_step(Transport& t, const ClusterSpec& c, const LinkShapes& s, Steps& steps, int node,
                    std::vector<Measurement>& out) {
  const std::uint64_t step = steps.take();
  const int me = t.rank();
  const int g = c.gpus_per_node;
  if (c.node_of(me) == node) {
    const int dst = me + g;
    (void)ping(t, dst, step, s);  // every pair warmed up before the timed part starts together
    barrier(t, step * 1024 + 512, s.timeout);
    const double seconds = send_timed(t, dst, step, s);
    out.push_back({.probe = Probe::all_rails,
                   .subject = gpu_name(c, me) + " → " + gpu_name(c, dst) +
                              fmt::format(" (NIC {}, all at once)", c.nic_of(me)),
                   .shape = size_text(s.bytes),
                   .node = node,
                   .gpu = c.local_of(me),
                   .peer_node = node + 1,
                   .peer_gpu = c.local_of(me),
                   .nic = c.nic_of(me),
                   .value = static_cast<double>(std::max(s.bytes, s.chunk)) / seconds});
  } else if (c.node_of(me) == node + 1) {
    pong(t, me - g, step, s);
    barrier(t, step * 1024 + 512, s.timeout);
    receive_timed(t, me - g, step, s);
  } else {
    barrier(t, step * 1024 + 512, s.timeout);
  }
  barrier(t, step, s.timeout);
}

// Node 0 GPU 0 → node 1 GPU 0 over every NIC: part r goes src → proxy_r → proxy_r + g → dst, where
// proxy_r is the first local GPU mapped to NIC r; consecutive equal hops are dropped.
void routed_step(Transport& t, const ClusterSpec& c, const LinkShapes& s, Steps& steps,
                 std::vector<Measurement>& out) {
  const std::uint64_t step = steps.take();
  const int me = t.rank(), src = 0, dst = c.gpus_per_node;
  const std::vector<std::vector<int>> paths = routed_paths(c);
  const auto parts = static_cast<std::int64_t>(paths.size());
  const std::int64_t chunks = std::max<std::int64_t>(1, s.bytes / s.chunk / parts);
  const Bytes chunk(static_cast<std::size_t>(s.chunk));
  const auto start = Clock::now();
  for (std::size_t p = 0; p < paths.size(); ++p) {
    const std::vector<int>& path = paths[p];
    const auto at = std::find(path.begin(), path.end(), me);
    if (at == path.end()) continue;
    const auto i = static_cast<std::size_t>(at - path.begin());
    const Tag data = tag(step, kRouted + p);
    for (std::int64_t k = 0; k < chunks; ++k) {
      if (i == 0)
        t.send(path[1], data, chunk);
      else if (i + 1 < path.size())
        t.send(path[i + 1], data, t.recv(path[i - 1], data, s.timeout));  // forward as it arrives
    }
  }
  if (me == dst) {
    for (std::size_t p = 0; p < paths.size(); ++p)
      for (std::int64_t k = 0; k < chunks; ++k)
        (void)t.recv(paths[p][paths[p].size() - 2], tag(step, kRouted + p), s.timeout);
    t.send(src, tag(step, kAck), {});
  }
  if (me == src) {
    (void)t.recv(dst, tag(step, kAck), s.timeout);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    out.push_back(
        {.probe = Probe::routed,
         .subject = gpu_name(c, src) + " → " + gpu_name(c, dst) + fmt::format(" over {} NICs", parts),
         .shape = size_text(s.bytes),
         .node = 0,
         .gpu = 0,
         .peer_node = 1,
         .peer_gpu = 0,
         .value = static_cast<double>(chunks * parts * s.chunk) / seconds});
  }
  barrier(t, step, s.timeout);
}

}  // namespace

std::vector<std::vector<int>> routed_paths(const ClusterSpec& c) {
  const int g = c.gpus_per_node, src = 0, dst = g;
  std::vector<std::vector<int>> paths;
  for (int nic = 0; nic < c.nics_per_node; ++nic) {
    const auto it = std::find(c.gpu_to_nic.begin(), c.gpu_to_nic.end(), nic);
    if (it == c.gpu_to_nic.end()) continue;
    const int proxy = static_cast<int>(it - c.gpu_to_nic.begin());
    std::vector<int> path{src};
    for (const int hop : {proxy, proxy + g, dst})
      if (hop != path.back()) path.push_back(hop);
    paths.push_back(std::move(path));
  }
  return paths;
}

void barrier(Transport& t, std::uint64_t id, std::chrono::milliseconds timeout) {
  const Tag done = Tag::make(MessageKind::transfer, id * 1024 + 1023);
  for (int r = 0; r < t.size(); ++r)
    if (r != t.rank()) t.send(r, done, {});
  for (int r = 0; r < t.size(); ++r)
    if (r != t.rank()) (void)t.recv(r, done, timeout);
}

std::vector<Measurement> run_link_probes(Transport& t, const ClusterSpec& c, const LinkShapes& s) {
  std::vector<Measurement> out;
  Steps steps;
  const int g = c.gpus_per_node;
  if (g > 1)
    for (int n = 0; n < c.nodes; ++n)
      for (int local = 0; local < g; ++local)
        pair_step(t, c, s, steps, Probe::p2p_intra, n * g + local, n * g + (local + 1) % g, out);
  for (int n = 0; n + 1 < c.nodes; ++n)
    for (int local = 0; local < g; ++local)
      pair_step(t, c, s, steps, Probe::p2p_rail, n * g + local, (n + 1) * g + local, out);
  for (int n = 0; n + 1 < c.nodes; ++n) all_rails_step(t, c, s, steps, n, out);
  if (c.nodes > 1) routed_step(t, c, s, steps, out);
  return out;
}

}  // namespace zb::qualify
