// `calibrate --backend cuda`: the measuring half of calibration.hpp on GPUs. Every rank times cuDNN's
// SDPA (forward and backward) and cuBLASLt at the scenario model's dims on its own GPU, all at once;
// then single NCCL messages between the first intra-node pair and the first inter-node pair; rank 0
// gathers every point. The fits (calibration_fit.cpp) are the reference backend's.
#include <cuda_runtime_api.h>

#include <cstring>

#include "core/cost/cost_model.hpp"
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

void measure_kernels(const Scenario& scenario, const GpuCalibrationSweep& sweep, int rank,
                     CalibrationSamples& out) {
  const gpu::Repeats repeats{sweep.warmup, sweep.repetitions};
  const ModelSpec& model = scenario.model;
  if (const std::string why = gpu::attention_unavailable_reason(); !why.empty())
    cuda::fail(rank, "calibrate --backend cuda needs cuDNN's SDPA for the attention fit: " + why,
               "build with cudnn-frontend (scripts/install-deps.sh) on a machine where libcudnn 9 loads");
  for (const int tokens : sweep.attention_tokens) {
    const double pairs = static_cast<double>(tokens) * (tokens + 1) / 2.0;
    const double flops =
        4.0 * model.hidden * pairs;  // CostModel::attention_fwd_flops, as the reference's calibration
    const gpu::AttentionSeconds t =
        gpu::time_attention(tokens, model.heads, model.kv_heads, model.head_dim(), true, repeats, rank);
    out.attention_forward.push_back({flops, static_cast<double>(tokens), t.forward});
    out.attention_backward.push_back({flops, static_cast<double>(tokens), t.backward});
  }
  const CostModel cost(scenario.cluster, model, scenario.hardware_profile.profile);
  for (const auto& g : cost.layer_gemms()) {
    if (g.n <= 0 || g.k <= 0) continue;
    for (const int m : sweep.gemm_rows) {
      const double seconds =
          gpu::time_gemm(m, static_cast<std::int64_t>(g.n), static_cast<std::int64_t>(g.k), repeats, rank);
      out.gemm.push_back({gemm_flops(m, static_cast<std::int64_t>(g.n), static_cast<std::int64_t>(g.k)),
                          static_cast<double>(m), seconds});
    }
  }
}

// Every rank's kernel points to every rank (CudaWorld::all_gather), as raw doubles.
void gather_points(cuda::CudaWorld& world, std::vector<KernelPoint>& points) {
  std::vector<char> mine(points.size() * sizeof(KernelPoint));
  if (!points.empty()) std::memcpy(mine.data(), points.data(), mine.size());
  points.clear();
  for (const std::vector<char>& bytes : world.all_gather(mine)) {
    std::vector<KernelPoint> theirs(bytes.size() / sizeof(KernelPoint));
    if (!theirs.empty()) std::memcpy(theirs.data(), bytes.data(), theirs.size() * sizeof(KernelPoint));
    points.insert(points.end(), theirs.begin(), theirs.end());
  }
}

}  // namespace

CalibrationSamples measure_for_calibration_cuda(const Scenario& scenario, const GpuCalibrationSweep& sweep) {
  const Launch launch = process_launch();
  const ClusterSpec& cluster = scenario.cluster;
  CalibrationSamples out;
  out.backend = "cuda";
  out.launch = describe(launch);
  if (!launch.multi_process()) {
    require_usable_gpu("calibrate", [] { static_cast<void>(cuda::usable_device_count()); });
    cuda::check_cuda(cudaSetDevice(0), 0, "cudaSetDevice", "calibrate: GPU 0");
    out.device = gpu::current_device(0).name;
    measure_kernels(scenario, sweep, 0, out);
    return out;
  }
  cuda::CudaWorld* world = nullptr;
  require_usable_gpu("calibrate", [&] { world = &cuda::CudaWorld::get(cluster.world_size()); });
  out.ranks = world->size();
  out.is_reporter = world->rank() == 0;
  out.device = world->gpu_name();
  measure_kernels(scenario, sweep, world->rank(), out);
  gpu::device_barrier(*world);
  if (cluster.gpus_per_node > 1)
    out.nvlink = gpu::message_times(*world, 0, 1, sweep.transfer_bytes, sweep.warmup, sweep.repetitions);
  if (cluster.nodes > 1)
    out.nic = gpu::message_times(*world, 0, cluster.gpus_per_node, sweep.transfer_bytes, sweep.warmup,
                                 sweep.repetitions);
  gather_points(*world, out.attention_forward);
  gather_points(*world, out.attention_backward);
  gather_points(*world, out.gemm);
  return out;
}

}  // namespace zb::qualify
