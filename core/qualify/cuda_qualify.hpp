#pragma once
// `qualify --backend cuda` and `calibrate --backend cuda` (docs/QUALIFY.md): the same suite, floors and
// fits as the reference backend, measured on GPUs. One process per GPU under mpirun or srun, each on the
// GPU of its local rank (core/exec/launch, core/exec/cuda's CudaWorld); without a launcher, this
// process alone on GPU 0, compute only.
//   compute  cuBLASLt bf16 GEMM over m = n = k, cuDNN fused SDPA causal forward over sequence lengths
//            (gpu_sweeps.hpp), timed with CUDA events: warm-up, repetitions, median;
//   links    NCCL point-to-point on the world communicator, in the reference's steps (link_probes.hpp):
//            GPU pairs inside each node, each rail, every rail at once, a routed transfer against a
//            direct one.
// The implementation is built with the CUDA toolkit and NCCL (core/qualify/cuda/); without them both
// functions are bad input (exit 2) saying what this build lacks.
#include <string>

#include "core/config/scenario.hpp"
#include "core/qualify/calibration.hpp"
#include "core/qualify/qualify_run.hpp"

namespace zb::qualify {

// Whether this build has the GPU probes; when not, why ("CUDA was not found when this build was
// configured").
[[nodiscard]] bool cuda_probes_built();
[[nodiscard]] std::string cuda_probes_missing_reason();

// Exit 2 when not built or when the launch's world is not the scenario's GPU count; exit 3 (core/exec/
// cuda's device check: "no usable CUDA device (cudaGetDeviceCount: …)") on a machine without a usable
// GPU, and when a probe fails at run time.
[[nodiscard]] QualifyResult run_qualify_cuda(const Scenario& scenario, const QualifyOptions& options);
[[nodiscard]] CalibrationSamples measure_for_calibration_cuda(const Scenario& scenario,
                                                              const GpuCalibrationSweep& sweep);

}  // namespace zb::qualify
