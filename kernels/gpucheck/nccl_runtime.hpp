#pragma once
// NCCL loaded at run time for zb_gpucheck interference (built only with ZB_HAVE_NCCL: nccl.h found by
// kernels/cmake/ZbNccl.cmake). Why dlopen and not a link: on the GPU machine NCCL is PyTorch's wheel
// (nvidia/nccl/lib/libnccl.so.2), and a prebuilt driver that links it would not load wherever that folder
// is not on the library path: scripts/gpu-check.sh would then rebuild the whole driver from source
// (minutes). Loaded at run time, the driver always starts; without NCCL it says so and measures the rest.
// Only the header is used at build time, for the types and the functions' exact signatures.
#include <nccl.h>

#include <string>

#include "kernels/status.hpp"

namespace zb::kernels::gpucheck {

// The few NCCL entry points the interference measurement calls, resolved from one loaded libnccl.
struct NcclApi {
  decltype(&ncclGetVersion) get_version = nullptr;
  decltype(&ncclGetErrorString) error_string = nullptr;
  decltype(&ncclCommInitAll) comm_init_all = nullptr;
  decltype(&ncclCommDestroy) comm_destroy = nullptr;
  decltype(&ncclGroupStart) group_start = nullptr;
  decltype(&ncclGroupEnd) group_end = nullptr;
  decltype(&ncclSend) send = nullptr;
  decltype(&ncclRecv) recv = nullptr;
  std::string library;  // the file that was loaded
  int version = 0;      // ncclGetVersion's code (2.28.9: 22809)

  // "<what>: <NCCL's error text>" unless `result` is ncclSuccess.
  [[nodiscard]] Status check(ncclResult_t result, const std::string& what) const;
};

// Loads libnccl.so.2 (the dynamic loader's path first: LD_LIBRARY_PATH, which scripts/gpu-check.sh sets
// to NVIDIA's folders; then python3's site-packages nvidia/nccl/lib; then libnccl.so) and resolves the
// entry points. A failure's message says what was tried; the library stays loaded for the process.
Status load_nccl(NcclApi& api);

}  // namespace zb::kernels::gpucheck
