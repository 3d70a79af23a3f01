#pragma once
// The cuda executor's measured NIC loads: on each node's first rank, a NicSampler (core/exec/nic) over
// the node's NIC counters (node_nics.hpp says which) runs around one extra layer after the timed ones,
// and the loads it yields, on the trace axis from that layer's forward start, travel in the rank's
// record into trace.links, marked measured. The counters are per host, so one rank per node reads them;
// the others, and every rank with ZB_NICS=off, do nothing here.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "core/exec/cuda/cuda_options.hpp"
#include "core/exec/cuda/trace_codec.hpp"
#include "core/exec/cuda/trace_events.hpp"
#include "core/exec/nic/nic_sampler.hpp"

namespace zb::cuda {

class NodeNicSampling {
 public:
  // On a node's first rank: the node's GPU bus ids from CUDA, the counters, and a sampler, which reads
  // them once now. Exit 2 for a NIC that ZB_NICS names and this host lacks; a node without usable
  // InfiniBand devices samples nothing and keeps a note saying so.
  NodeNicSampling(const CudaOptions& options, int rank, int gpus_per_node, int nics_per_node);

  [[nodiscard]] bool samples() const { return sampler_ != nullptr; }
  void start();
  // Stops the sampler and keeps its loads, `forward`'s host start at 0 on the trace axis; `bandwidth`
  // is the scenario's nominal NIC rate (bytes/s).
  void stop(const PassTimes& forward, double bandwidth);
  // The node's loads and what there is to say about them, into the rank's record.
  void add_to(RankRecord& record) const;

 private:
  int node_;
  std::chrono::microseconds interval_;
  nic::NicSampler::Clock::time_point origin_;
  std::unique_ptr<nic::NicSampler> sampler_;
  std::vector<LinkLoad> loads_;
  std::string note_;
};

}  // namespace zb::cuda
