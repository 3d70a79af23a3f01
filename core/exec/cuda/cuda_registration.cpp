// The `cuda` backend's registration (core/exec/backend_registry.hpp): GPUs under NCCL. It is listed in
// every build, since its options (CudaOptions, pure C++) are, but it has a factory only where the build
// found CUDA and NCCL (ZEPPELIN_HAVE_CUDA_EXECUTOR); elsewhere it says why. The values below are read
// back from CudaOptions, whose from_environment reads the ZB_CUDA_* and ZB_NIC* variables
// (docs/CUDA_BACKEND.md), so they cannot drift from what the executor runs with.
#include "core/exec/backend_registry.hpp"
#include "core/exec/cuda/cuda_options.hpp"
#ifdef ZEPPELIN_HAVE_CUDA_EXECUTOR
#include "core/exec/cuda/cuda_executor.hpp"
#endif

namespace zb::cuda {
namespace {

// In the order of `options` below.
BackendOptionValues values_of(const CudaOptions& o) {
  return {{"warmup", std::to_string(o.warmup)},
          {"repetitions", std::to_string(o.repetitions)},
          {"attention_kernel", to_string(o.attention)},
          {"verify", to_string(o.verify)},
          {"cupti", o.cupti ? "on" : "off"},
          {"nics", !o.nic_sampling  ? "off"
                   : o.nics.empty() ? "auto"
                                    : option_text(o.nics)},
          {"nic_interval_us", std::to_string(o.nic_interval.count())}};
}

BackendOptionValues defaults() {
  return values_of(CudaOptions{});
}
BackendOptionValues configured() {
  return values_of(CudaOptions::from_environment());
}

#ifdef ZEPPELIN_HAVE_CUDA_EXECUTOR
std::unique_ptr<Executor> make_cuda_executor() {
  return std::make_unique<CudaExecutor>(CudaOptions::from_environment());
}
constexpr BackendFactory factory = make_cuda_executor;
constexpr const char* missing = "";
#else
constexpr BackendFactory factory = nullptr;
#ifdef ZEPPELIN_HAVE_CUDA
constexpr const char* missing = "NCCL was not found when this build was configured";
#else
constexpr const char* missing = "CUDA was not found when this build was configured";
#endif
#endif

using Type = BackendOptionType;

const BackendRegistration registration{BackendInfo{
    .name = "cuda",
    .description = "GPUs under NCCL: cuDNN or own attention kernels, CUDA-event timing, CUPTI activity "
                   "(docs/CUDA_BACKEND.md)",
    .simulated = false,
    .order = 30,
    .options =
        {{"warmup", Type::integer, {}, "ZB_CUDA_WARMUP", "untimed layers before the timed ones"},
         {"repetitions",
          Type::integer,
          {},
          "ZB_CUDA_REPETITIONS",
          "timed layers; each pass's time is their median of the slowest rank"},
         {"attention_kernel",
          Type::choice,
          {"auto", "cudnn", "zb"},
          "ZB_CUDA_ATTENTION_KERNEL",
          "auto: cuDNN's SDPA when this build has it and it loads, else the own (forward-only) kernels"},
         {"verify",
          Type::choice,
          {"auto", "on", "off"},
          "ZB_CUDA_VERIFY",
          "the untimed correctness pass against the float64 oracle; auto: when its work is small"},
         {"cupti",
          Type::choice,
          {"on", "off"},
          "ZB_CUDA_CUPTI",
          "CUPTI's activity trace over the timed layers"},
         {"nics",
          Type::list,
          {},
          "ZB_NICS",
          "NICs sampled around one extra layer, in NIC order; auto: the closest to each rail; off: none"},
         {"nic_interval_us", Type::integer, {}, "ZB_NIC_INTERVAL_US", "NIC counter sampling period"}},
    .defaults = defaults,
    .configured = configured,
    .factory = factory,
    .unavailable = missing,
    .unavailable_hint = "use --backend sim, or install the CUDA toolkit with NCCL and reconfigure"}};

}  // namespace
}  // namespace zb::cuda
