#include "core/exec/cuda/node_nic_sampling.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>

#include "core/exec/cuda/cuda_check.hpp"
#include "core/exec/cuda/node_nics.hpp"

namespace zb::cuda {
namespace {

// The node's GPUs in local order, as sysfs spells their PCI devices (the first rank sees them all).
std::vector<std::string> node_gpu_bus_ids(int gpus_per_node, int rank) {
  int visible = 0;
  check_cuda(cudaGetDeviceCount(&visible), rank, "cudaGetDeviceCount", "backend cuda: the node's GPUs");
  std::vector<std::string> ids;
  for (int device = 0; device < std::min(visible, gpus_per_node); ++device) {
    char id[32] = {};
    check_cuda(cudaDeviceGetPCIBusId(id, sizeof id, device), rank, "cudaDeviceGetPCIBusId",
               "backend cuda: the PCI bus id of GPU " + std::to_string(device));
    ids.emplace_back(id);
  }
  return ids;
}

}  // namespace

NodeNicSampling::NodeNicSampling(const CudaOptions& options, int rank, int gpus_per_node, int nics_per_node)
    : node_(gpus_per_node > 0 ? rank / gpus_per_node : 0), interval_(options.nic_interval) {
  if (!options.nic_sampling || gpus_per_node <= 0 || rank % gpus_per_node != 0) return;
  NodeNics nics = node_nics(options.nics, node_gpu_bus_ids(gpus_per_node, rank), nics_per_node);
  note_ = nics.note;
  if (nics.counters.empty()) return;
  origin_ = nic::NicSampler::Clock::now();
  sampler_ = std::make_unique<nic::NicSampler>(std::move(nics.counters), interval_, origin_);
}

void NodeNicSampling::start() {
  if (sampler_) sampler_->start();
}

void NodeNicSampling::stop(const PassTimes& forward, double bandwidth) {
  if (!sampler_) return;
  const std::vector<nic::Sample> samples = sampler_->stop();
  // Sample times count from origin_, on the steady clock the pass's host window is read on.
  const auto origin_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(origin_.time_since_epoch()).count();
  const double shift = static_cast<double>(forward.host_start_ns - origin_ns) * 1e-9;
  loads_ = shifted_loads(nic::link_loads(samples, node_, bandwidth), shift);
}

void NodeNicSampling::add_to(RankRecord& record) const {
  record.links.insert(record.links.end(), loads_.begin(), loads_.end());
  if (!note_.empty()) record.notes.push_back(note_);
}

}  // namespace zb::cuda
