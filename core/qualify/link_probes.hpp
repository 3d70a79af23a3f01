#pragma once
// The link half of a qualification: point-to-point bandwidth and latency between ranks, measured over
// the reference backend's transport (one process per GPU under mpirun; on the emulated cluster each
// rail is a real interface). Every rank calls run_link_probes with the same arguments: the probes are a
// fixed sequence of steps with a barrier between them, and in each step only the ranks it names move
// bytes, so a figure is never shared with another step's traffic. In order:
//   1. p2p-intra: GPU g → GPU g+1 of each node, one pair at a time;
//   2. p2p-rail: GPU g of node n → GPU g of node n+1, one pair at a time (the transfer leaves on g's NIC);
//   3. all-rails: every GPU g of node n → GPU g of node n+1 at once (each pair reports its own rate);
//   4. routed: node 0 GPU 0 → node 1 GPU 0, the bytes split over every NIC through the first GPU mapped
//      to each (an intra-node hop, the rail, an intra-node hop; proxies forward chunk by chunk), as
//      Zeppelin's routing layer sends; its floor is the direct rails' median (floors.hpp).
// Bandwidth: `bytes` sent as `chunk`-sized messages, timed by the sender from the first send until the
// receiver's acknowledgement of the last (the ping-pong first opens the connection; a pair's step sends
// one untimed transfer of the full size before the timed one). Latency: the mean one-way time of
// `round_trips` 8-byte ping-pongs.
#include <chrono>
#include <cstdint>
#include <vector>

#include "core/config/scenario.hpp"
#include "core/exec/reference/transport.hpp"
#include "core/qualify/measurement.hpp"

namespace zb::qualify {

struct LinkShapes {
  std::int64_t bytes = 16 << 20;
  std::int64_t chunk = 1 << 20;
  int round_trips = 50;
  std::chrono::milliseconds timeout{30000};  // a receive that waits longer names the link and fails
};

// This rank's figures (a link's figure is reported by its sender).
[[nodiscard]] std::vector<Measurement> run_link_probes(reference::Transport& transport,
                                                       const ClusterSpec& cluster, const LinkShapes& shapes);

// The paths of the routed probe, node 0 GPU 0 → node 1 GPU 0: one per NIC that some GPU maps to, through
// proxy_r (the first local GPU mapped to NIC r) and its peer on node 1, src → proxy_r → proxy_r + g → dst
// with consecutive equal hops dropped (NIC 0's path is direct when GPU 0 maps to it). Needs 2 nodes.
[[nodiscard]] std::vector<std::vector<int>> routed_paths(const ClusterSpec& cluster);

// A barrier over the transport (every rank sends every other an empty message tagged `id`, then waits
// for all of theirs): qualify's steps and the compute probes' turns use it.
void barrier(reference::Transport& transport, std::uint64_t id, std::chrono::milliseconds timeout);

}  // namespace zb::qualify
