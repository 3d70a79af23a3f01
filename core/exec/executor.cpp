#include "core/exec/executor.hpp"

#include "core/common/error.hpp"
#ifdef ZEPPELIN_HAVE_CUDA_EXECUTOR
#include "core/exec/cuda/cuda_executor.hpp"
#endif

namespace zb {

std::vector<std::string> shut_down_backends([[maybe_unused]] bool after_failure) {
#ifdef ZEPPELIN_HAVE_CUDA_EXECUTOR
  return cuda::shut_down_cuda(after_failure);
#else
  return {};
#endif
}

}  // namespace zb
