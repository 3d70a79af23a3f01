#include "core/exec/cuda/runtime_facts.hpp"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "core/exec/cuda/cuda_check.hpp"
#include "core/exec/cuda/runtime_versions.hpp"
#ifdef ZB_CUDA_EXEC_HAVE_CUBLASLT
#include <cublasLt.h>
#endif
#ifdef ZEPPELIN_HAVE_CUDNN
#include <cudnn.h>
#endif
#ifdef ZEPPELIN_HAVE_CUPTI
#include <cupti.h>
#endif

namespace zb::cuda {

RuntimeFacts ask_runtime_facts(int rank, int device) {
  const std::string context = "backend cuda: asking the versions in use for the report's provenance";
  RuntimeFacts facts;
  facts.asked_by = "cuda backend, rank " + std::to_string(rank) + " (GPU " + std::to_string(device) + ")";
  int driver = 0, runtime = 0, nccl = 0;
  check_cuda(cudaDriverGetVersion(&driver), rank, "cudaDriverGetVersion", context);
  check_cuda(cudaRuntimeGetVersion(&runtime), rank, "cudaRuntimeGetVersion", context);
  check_nccl(ncclGetVersion(&nccl), rank, "ncclGetVersion", context);
  facts.libraries.emplace_back("cuda_driver", cuda_version_text(driver));
  facts.libraries.emplace_back("cuda_runtime", cuda_version_text(runtime));
  facts.libraries.emplace_back("nccl", nccl_version_text(nccl));
#ifdef ZEPPELIN_HAVE_CUDNN
  // cudnnGetVersion has no error code: it returns the loaded library's CUDNN_VERSION.
  facts.libraries.emplace_back("cudnn", cudnn_version_text(cudnnGetVersion()));
#endif
#ifdef ZB_CUDA_EXEC_HAVE_CUBLASLT
  facts.libraries.emplace_back("cublaslt", cublaslt_version_text(cublasLtGetVersion()));
#endif
#ifdef ZEPPELIN_HAVE_CUPTI
  std::uint32_t cupti = 0;
  if (const CUptiResult code = cuptiGetVersion(&cupti); code == CUPTI_SUCCESS) {
    facts.libraries.emplace_back("cupti", cupti_version_text(cupti));
  } else {
    const char* text = nullptr;
    cuptiGetResultString(code, &text);
    facts.libraries.emplace_back("cupti",
                                 std::string("unavailable: cuptiGetVersion failed: ") +
                                     (text != nullptr ? text : std::to_string(static_cast<int>(code))));
  }
#endif
  cudaDeviceProp props{};
  check_cuda(cudaGetDeviceProperties(&props, device), rank, "cudaGetDeviceProperties", context);
  facts.gpu_name = props.name;
  facts.gpu_sm_count = props.multiProcessorCount;
  facts.gpu_memory_bytes = static_cast<std::int64_t>(props.totalGlobalMem);
  facts.gpu_compute_capability = std::to_string(props.major) + "." + std::to_string(props.minor);
  return facts;
}

}  // namespace zb::cuda
