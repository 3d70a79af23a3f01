#pragma once
// The `cuda` backend: runs a lowered Program on GPUs, one process per GPU (mpirun -np N / srun -n N),
// kernels on a compute stream and NCCL on a comm stream in the Program's global NCCL order
// (nccl_order.hpp), and measures it as nccl-tests does: warm-up layers, then timed repetitions with
// CUDA events around each pass; a pass's time is the slowest rank's, its reported value the median
// over repetitions, and the trace's events are those of the median repetition, gathered from every
// rank (docs/CUDA_BACKEND.md). Built only with CUDA and NCCL (ZEPPELIN_HAVE_CUDA_EXECUTOR).
#include <string>
#include <vector>

#include "core/exec/cuda/cuda_options.hpp"
#include "core/exec/executor.hpp"

namespace zb::cuda {

class CudaExecutor final : public Executor {
 public:
  explicit CudaExecutor(CudaOptions options = {});
  [[nodiscard]] std::string backend() const override { return "cuda"; }
  // The device and the launch checked for the scenario's GPU count (CudaWorld::get: exit 3 without a usable
  // GPU, exit 2 for a launch that does not match), NCCL's world communicator made, and the versions of the
  // driver, the runtime and the libraries asked (runtime_facts.hpp).
  void prepare(const ClusterSpec& cluster) override;
  [[nodiscard]] RuntimeFacts runtime_facts() const override { return facts_; }
  // Exit 3 without a usable GPU ("no usable CUDA device"); exit 2 when the launch does not match the
  // program (world size, more processes than GPUs on a node) or the kernels cannot run it.
  [[nodiscard]] Trace run(const lower::Program& program, const ExecContext& context) override;
  // It packs every message's rows from the slices, and its check compares them with the oracle's.
  [[nodiscard]] bool reads_rows() const override { return true; }

 private:
  CudaOptions options_;
  RuntimeFacts facts_;
};

// CudaWorld::shutdown, for core/exec's shut_down_backends (which must not include NCCL's headers).
[[nodiscard]] std::vector<std::string> shut_down_cuda(bool after_failure);

}  // namespace zb::cuda
