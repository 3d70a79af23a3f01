#pragma once
// core/exec/cuda's device check, worded for qualify and calibrate: its "no usable CUDA device" error
// (exit 3) ends with the advice for `run` ("use --backend sim"), which these commands do not have; this
// keeps its diagnosis and gives theirs.
#include <functional>
#include <string>

#include "core/common/error.hpp"

namespace zb::qualify {

// Runs `check` (usable_device_count() or CudaWorld::get(), which calls it first); its no-device error is
// rethrown as "<command> --backend cuda: no usable CUDA device (…)" with this command's advice, every
// other error as it was.
inline void require_usable_gpu(const std::string& command, const std::function<void()>& check) {
  try {
    check();
  } catch (const Error& e) {
    if (e.code() != ExitCode::runtime || e.problems().empty()) throw;
    std::string what = e.problems().front().what;
    const auto diagnosis = what.find("no usable CUDA device");
    if (diagnosis == std::string::npos) throw;
    what.erase(0, diagnosis);
    if (const auto advice = what.rfind("; use --backend sim"); advice != std::string::npos)
      what.erase(advice);
    throw Error(ExitCode::runtime, e.problems().front().where, command + " --backend cuda: " + what,
                "check nvidia-smi, the driver and CUDA_VISIBLE_DEVICES; without a GPU, --backend reference "
                "measures this "
                "host's CPU kernels and network interfaces");
  }
}

}  // namespace zb::qualify
