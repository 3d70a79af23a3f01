#pragma once
// The simulated cluster as a list of links and the route of every GPU pair, independent of SimGrid, so
// that the same description builds the SimGrid platform (in the simulation child) and attributes flows
// to links (in the parent, for the per-link load of the Trace).
//
// Topology (DESIGN §4, docs/SIMULATOR.md):
//   * every GPU has an NVLink link out and one in, to a non-blocking NVSwitch;
//   * every NIC has a tx and an rx link; GPUs reach their NIC (gpu_to_nic) optionally over PCIe, one
//     link per GPU and direction;
//   * the network core is one link of capacity nodes·nics·nic_bw/oversubscription, present only when
//     oversubscription > 1: otherwise its capacity equals the sum of the NIC links feeding it and it can
//     never be the bottleneck, while one shared constraint would tie every inter-node flow of the
//     cluster into one max-min component and slow the solver down.
// Routes: same GPU: none. Same node: nvlink-out(src) → nvlink-in(dst).
//         Other node: [pcie-up(src)] → nic-tx(nic of src) → [core] → nic-rx(nic of dst) → [pcie-down(dst)].
// Latency: each route carries its class's latency once (NVLink latency on nvlink-out, NIC latency on
// nic-tx), and every link runs at its class's efficiency (NVLink ports: nvlink_efficiency; NIC, PCIe and
// core: nic_efficiency). The profile's per-transfer overhead of the route's class is not a link latency:
// it occupies the sender (issue_overhead, LogGP's o), so a GPU's messages pay it one after another while
// their latencies overlap. A lone transfer still takes overhead + latency + bytes / (bandwidth · η), the
// cost model's form.
#include <string>
#include <vector>

#include "core/config/hardware_profile.hpp"
#include "core/config/scenario.hpp"
#include "core/exec/trace.hpp"

namespace zb::sim {

struct PlatformLink {
  std::string name;
  LinkKind kind = LinkKind::nvlink_out;
  int node = -1;
  int index = -1;
  double nominal_bandwidth = 0;  // bytes/s as the cluster spec states it
  double bandwidth = 0;          // what the simulator uses: nominal · its class's efficiency
  double latency = 0;            // seconds (the wire's; the per-message overhead is issue_overhead)
};

class Platform {
 public:
  Platform(const ClusterSpec& cluster, const HardwareProfile& profile);

  [[nodiscard]] int world_size() const { return world_size_; }
  [[nodiscard]] const std::vector<PlatformLink>& links() const { return links_; }
  // Link indices a flow src → dst crosses, in order (empty when src == dst).
  [[nodiscard]] std::vector<int> route(int src, int dst) const;
  // route() without the links that can never bind, for the SimGrid routes (fewer max-min constraints per
  // flow). A GPU's PCIe link is left out when its NIC serves that GPU alone and PCIe is at least as fast
  // as the NIC: both links then carry exactly the same flows, and in max-min fair sharing a constraint
  // with the same flows as another and a capacity at least as large never saturates first. PCIe has no
  // latency, so route latencies (CM02's sharing weights) keep their value. Link loads still use route().
  [[nodiscard]] std::vector<int> solver_route(int src, int dst) const;
  // Sum of the latencies along route(src, dst).
  [[nodiscard]] double route_latency(int src, int dst) const;
  // Seconds a message src → dst occupies its sender before its bytes move (the profile's
  // nvlink_transfer_overhead inside a node, nic_transfer_overhead across nodes).
  [[nodiscard]] double issue_overhead(int src, int dst) const;
  [[nodiscard]] bool inter_node(int src, int dst) const {
    return cluster_.node_of(src) != cluster_.node_of(dst);
  }
  // How much longer compute takes while its GPU runs communication (0 when interference is off).
  [[nodiscard]] double compute_slowdown_under_comm() const { return profile_.overlap_slowdown(); }
  [[nodiscard]] std::string host_name(int rank) const;

 private:
  int add_link(std::string name, LinkKind kind, int node, int index, double nominal, double latency);

  ClusterSpec cluster_;
  HardwareProfile profile_;
  int world_size_ = 0;
  std::vector<PlatformLink> links_;
  std::vector<int> nvlink_out_, nvlink_in_, pcie_up_, pcie_down_;  // per rank; −1 when absent
  std::vector<int> nic_tx_, nic_rx_;                               // per global NIC id
  int core_ = -1;
  bool pcie_never_binds_ = false;  // see solver_route
};

}  // namespace zb::sim
