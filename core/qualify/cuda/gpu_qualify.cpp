// `qualify --backend cuda`: every rank measures its own GPU (all at once: GPUs share nothing a kernel
// uses), then the link steps, then rank 0 gathers every figure and note and checks them against the
// floors. Without a launcher: GPU 0 of this machine, compute only.
#include <cuda_runtime_api.h>

#include <string>

#include "core/exec/cuda/cuda_check.hpp"
#include "core/exec/cuda/cuda_world.hpp"
#include "core/exec/launch/launcher.hpp"
#include "core/qualify/cuda/gpu_kernel_probes.hpp"
#include "core/qualify/cuda/gpu_link_probes.hpp"
#include "core/qualify/cuda/gpu_support.hpp"
#include "core/qualify/cuda/usable_gpu.hpp"
#include "core/qualify/cuda_qualify.hpp"

namespace zb::qualify {
namespace {

// A rank's figures and notes as JSON bytes, for CudaWorld::all_gather.
std::vector<char> encode(const std::vector<Measurement>& figures, const std::vector<std::string>& notes) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const Measurement& m : figures) list.push_back(to_json(m));
  const std::string text = nlohmann::ordered_json{{"figures", list}, {"notes", notes}}.dump();
  return {text.begin(), text.end()};
}

void decode(const std::vector<char>& bytes, std::vector<Measurement>& figures,
            std::vector<std::string>& notes) {
  const nlohmann::json json = nlohmann::json::parse(bytes.begin(), bytes.end());
  for (const auto& entry : json.at("figures")) figures.push_back(measurement_from_json(entry));
  for (const auto& note : json.at("notes")) notes.push_back(note.get<std::string>());
}

}  // namespace

bool cuda_probes_built() {
  return true;
}
std::string cuda_probes_missing_reason() {
  return {};
}

QualifyResult run_qualify_cuda(const Scenario& scenario, const QualifyOptions& options) {
  validate(options.gpu_compute);
  validate(options.gpu_links);
  const Launch launch = process_launch();
  const ClusterSpec& cluster = scenario.cluster;
  QualifyResult result;
  result.scenario = scenario.name;
  result.backend = "cuda";
  result.launch = describe(launch);
  if (!launch.multi_process()) {
    require_usable_gpu("qualify", [] { static_cast<void>(cuda::usable_device_count()); });
    cuda::check_cuda(cudaSetDevice(0), 0, "cudaSetDevice", "qualify: GPU 0");
    const gpu::DeviceFacts device = gpu::current_device(0);
    std::vector<Measurement> figures =
        gpu::run_gpu_compute_probes(0, 0, options.gpu_compute, device.memory_bytes, 0, result.notes);
    result.verdicts = evaluate(figures, options.floors);
    result.notes.insert(result.notes.begin(), "measured on " + device.name + " (GPU 0 of this machine)");
    if (cluster.world_size() > 1)
      result.notes.push_back(
          "one process: only GPU 0's compute figures were measured, as node 0 GPU 0; run under mpirun -np " +
          std::to_string(cluster.world_size()) + " (one process per GPU) to measure every GPU and link");
    return result;
  }
  cuda::CudaWorld* world = nullptr;
  require_usable_gpu("qualify", [&] { world = &cuda::CudaWorld::get(cluster.world_size()); });
  const int rank = world->rank();
  result.world_size = world->size();
  result.is_reporter = rank == 0;
  const gpu::DeviceFacts device = gpu::current_device(rank);
  std::vector<std::string> notes;
  std::vector<Measurement> mine = gpu::run_gpu_compute_probes(
      cluster.node_of(rank), cluster.local_of(rank), options.gpu_compute, device.memory_bytes, rank, notes);
  gpu::device_barrier(*world);
  const std::vector<Measurement> links = gpu::run_gpu_link_probes(*world, cluster, options.gpu_links);
  mine.insert(mine.end(), links.begin(), links.end());
  std::vector<Measurement> all;
  for (const std::vector<char>& bytes : world->all_gather(encode(mine, notes)))
    decode(bytes, all, result.notes);
  order_for_report(all);
  result.links_measured = world->size() > 1;
  result.verdicts = evaluate(rank == 0 ? all : mine, options.floors);
  result.notes.insert(result.notes.begin(), "measured on " + device.name + " (rank 0's GPU)");
  if (cluster.nodes < 2) result.notes.push_back("one node: no rail, all-rails or routed figure");
  if (cluster.gpus_per_node < 2) result.notes.push_back("one GPU per node: no p2p-intra figure");
  return result;
}

}  // namespace zb::qualify
