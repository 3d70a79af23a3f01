// The cuda backend of qualify and calibrate in a build without the CUDA toolkit or NCCL: bad input
// (exit 2) naming what the build lacks, as `run --backend cuda` says (core/exec/executor.cpp).
#include "core/common/error.hpp"
#include "core/qualify/cuda_qualify.hpp"

namespace zb::qualify {
namespace {

[[noreturn]] void refuse(const char* command) {
  throw Error(ExitCode::bad_input, Location{},
              std::string(command) + " --backend cuda is not available in this build (" +
                  cuda_probes_missing_reason() + ")",
              "use --backend reference, or install the CUDA toolkit with NCCL and reconfigure "
              "(ZEPPELIN_CUDA=AUTO or ON)");
}

}  // namespace

bool cuda_probes_built() {
  return false;
}

std::string cuda_probes_missing_reason() {
#ifdef ZEPPELIN_HAVE_CUDA
  return "NCCL was not found when this build was configured";
#else
  return "CUDA was not found or ZEPPELIN_CUDA=OFF when this build was configured";
#endif
}

QualifyResult run_qualify_cuda(const Scenario&, const QualifyOptions&) {
  refuse("qualify");
}

CalibrationSamples measure_for_calibration_cuda(const Scenario&, const GpuCalibrationSweep&) {
  refuse("calibrate");
}

}  // namespace zb::qualify
