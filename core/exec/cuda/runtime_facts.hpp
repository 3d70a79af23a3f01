#pragma once
// The versions and the GPU a cuda run reports in its provenance (core/exec/executor.hpp's RuntimeFacts),
// asked at run time of the driver and of the libraries this process loaded: the build's headers say which
// versions it was compiled against, not which ones ran (a newer driver, another NCCL on LD_LIBRARY_PATH).
// Built with the executor (CUDA and NCCL); the decoding of each integer is runtime_versions.hpp's.
#include "core/exec/executor.hpp"

namespace zb::cuda {

// Asks cudaDriverGetVersion, cudaRuntimeGetVersion, ncclGetVersion, cudnnGetVersion (a build with cuDNN),
// cublasLtGetVersion (a build with cuBLASLt), cuptiGetVersion (a build with CUPTI) and the properties of
// `device`. Exit 3 naming the call when the driver, the runtime or NCCL cannot answer; CUPTI not answering
// is written as the library's value ("unavailable: …"), since the run does not need it.
[[nodiscard]] RuntimeFacts ask_runtime_facts(int rank, int device);

}  // namespace zb::cuda
