#include "core/lower/estimate.hpp"

#include <algorithm>

#include "core/common/error.hpp"

namespace zb::lower {

TransferModel nominal_transfers(const Program& program, const CostModel& cost) {
  const int g = program.gpus_per_node;
  const ClusterSpec& cluster = cost.cluster();
  double nic_rate = cluster.nic.bandwidth;
  if (cluster.pcie_bandwidth) nic_rate = std::min(nic_rate, *cluster.pcie_bandwidth);
  const LinkSpec whole_nic{.bandwidth = nic_rate / cluster.oversubscription, .latency = cluster.nic.latency};
  const LinkSpec nvlink = cost.nvlink();  // once, not per leg
  TransferModel model;
  model.p2p = [&cost, g, whole_nic, nvlink](int src, int dst, std::int64_t bytes, const Message&) {
    const auto b = static_cast<double>(bytes);
    const bool local = src / g == dst / g;
    return cost.transfer_time(b, local ? nvlink : whole_nic, local ? LinkClass::nvlink : LinkClass::nic);
  };
  // Link ids: 2r and 2r+1 are rank r's NVLink out- and in-ports; then each NIC's transmit and receive side.
  const int world = cluster.world_size();
  model.link_count = 2 * world + 2 * cluster.nodes * cluster.nics_per_node;
  model.links = [&cluster, g, world](int src, int dst, const Message& message, std::vector<int>& links) {
    if (src / g == dst / g) {
      // A routed part's dispatch leg holds only its source's out-port and its combine leg only its
      // destination's in-port: the proxies' ports interleave those parts with their own ring traffic,
      // which first-come-first-served would instead queue whole (a convoy the simulator does not see).
      if (message.routed) {
        if (src == message.src) links.push_back(2 * src);
        if (dst == message.dst) links.push_back(2 * dst + 1);
        return;
      }
      links.push_back(2 * src);
      links.push_back(2 * dst + 1);
      return;
    }
    links.push_back(2 * world + 2 * cluster.global_nic_of(src));
    links.push_back(2 * world + 2 * cluster.global_nic_of(dst) + 1);
  };
  model.collective = [&cost, g](const Collective& c) {
    const auto p = static_cast<double>(c.ranks.size());
    if (c.ranks.size() < 2) return 0.0;
    bool crosses = false;
    for (std::size_t k = 0; k < c.ranks.size(); ++k)
      crosses |= c.ranks[k] / g != c.ranks[(k + 1) % c.ranks.size()] / g;
    const LinkSpec link = crosses ? cost.nic_per_gpu() : cost.nvlink();
    const LinkClass cls = crosses ? LinkClass::nic : LinkClass::nvlink;
    const auto bytes = static_cast<double>(c.bytes);
    switch (c.kind) {
      case CollectiveKind::all_gather:
      case CollectiveKind::reduce_scatter:
        return (p - 1) * cost.transfer_time(bytes, link, cls);
      case CollectiveKind::all_reduce:
        return 2 * (p - 1) * cost.transfer_time(bytes / p, link, cls);
      case CollectiveKind::all_to_all:
        return (p - 1) * cost.transfer_time(bytes / (p - 1), link, cls);  // bytes: all it sends
      case CollectiveKind::all_to_all_v:
        return 0.0;  // timed per message by the scheduler
    }
    return 0.0;
  };
  return model;
}

ProgramEstimate estimate(const Program& program, const TransferModel& model) {
  const Schedule s = schedule(program, model, ScheduleDetail::summary);
  if (!s.complete) {
    const auto [r, i] = s.posted_stuck.empty() ? s.stuck.front() : s.posted_stuck.front();
    Location where;
    where.rank = r;
    throw Error(ExitCode::runtime, where,
                "the program cannot finish: " + std::to_string(s.stuck.size()) +
                    " instructions never run, first " + describe(program, r, i),
                "run `zeppelin-bench plan --verify`: the rendezvous check names the cycle");
  }
  ProgramEstimate e;
  e.rank_forward_finish = s.rank_forward_finish;
  e.forward = s.barrier;
  e.backward = program.backward ? s.finish - s.barrier : 0.0;
  return e;
}

}  // namespace zb::lower
