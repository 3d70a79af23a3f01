#pragma once
// Zeppelin's routing layer: an inter-node transfer of B bytes from rank a (node X) to rank b (node Y) is
// split into one part per NIC of X. Part j goes a → proxy_j (a GPU of X on NIC j; a itself when its own
// NIC is j) over NVLink, proxy_j → peer_j (the GPU of Y on NIC j: rail-aligned) over NIC j, peer_j → b
// over NVLink, in chunks so the three legs pipeline. Part sizes are water-filled against the bytes each
// NIC (tx on X, rx on Y) already carries in the same ring step, so busy NICs get less.
#include <cstdint>
#include <map>
#include <vector>

#include "core/config/scenario.hpp"
#include "core/plan/plan.hpp"

namespace zb::zeppelin {

class Router {
 public:
  explicit Router(const ClusterSpec& cluster) : cluster_(cluster) {}

  [[nodiscard]] plan::Route route(int src, int dst, std::int64_t bytes, int step);

  // Bytes already assigned to a NIC (global NIC id) in a ring step, transmit and receive sides.
  [[nodiscard]] double tx_load(int step, int global_nic) const;
  [[nodiscard]] double rx_load(int step, int global_nic) const;

 private:
  // The GPU of `node` that relays through local NIC `nic`, preferring `prefer` when it is on that NIC.
  [[nodiscard]] int gpu_on_nic(int node, int nic, int prefer) const;

  ClusterSpec cluster_;
  std::map<int, std::vector<double>> tx_, rx_;  // step -> bytes per global NIC id
};

// Chunks per part: about 1 MiB pieces, between 1 and 8, so legs pipeline without tiny messages.
[[nodiscard]] int chunks_for(std::int64_t part_bytes);

}  // namespace zb::zeppelin
