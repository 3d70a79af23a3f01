#pragma once
// One rank's compute instructions on the GPU: for each attention or GEMM instruction a launch plan
// built once (plan time, before any NCCL work): the own kernels' AttentionSchedule or cuDNN's SdpaPlan
// for attention (its plan op's blocks, packed back to back as the reference packs them), a cuBLASLt
// GemmPlan for GEMMs. Compute runs in strict list order on one stream, so all instructions share one
// set of scratch operands (Q, K, V, O, LSE, dO, dQ, dK, dV, GEMM A, B, C, workspaces) sized for the
// largest: the kernels read pseudo-random rows of the right shapes; the copy of received K/V into
// place (a pack kernel) is not part of the measured instruction.
#include <memory>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "core/config/scenario.hpp"
#include "core/exec/cuda/compute_launcher.hpp"
#include "core/exec/cuda/cuda_options.hpp"
#include "core/exec/cuda/device_arena.hpp"
#include "core/lower/program.hpp"

namespace zb::cuda {

// The kernel this build and device run for `wanted`: exit 2 when cuDNN is asked for and the build has
// none; automatic picks cuDNN when it is built and loads.
[[nodiscard]] AttentionKernel resolve_attention_kernel(AttentionKernel wanted);

class RankCompute final : public ComputeLauncher {
 public:
  // Builds every plan and reserves the scratch. Exit 2 when the program has a backward attention and
  // the kernel is the own one (it has no backward) or when a GEMM needs cuBLASLt and this build lacks it.
  RankCompute(const lower::Program& program, int rank, const ModelSpec& model, AttentionKernel kernel,
              DeviceArena& arena);
  ~RankCompute() override;
  RankCompute(const RankCompute&) = delete;
  RankCompute& operator=(const RankCompute&) = delete;

  // Enqueues compute instruction `id` on `stream` (asynchronous, no allocation); exit 3 naming the
  // instruction and the call when the launch fails.
  void launch(int id, cudaStream_t stream) const override;

 private:
  struct Plans;
  const lower::Program& program_;
  int rank_;
  AttentionKernel kernel_;
  const DeviceArena& arena_;
  std::unique_ptr<Plans> plans_;
};

}  // namespace zb::cuda
