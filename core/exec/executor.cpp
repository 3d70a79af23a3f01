#include "core/exec/executor.hpp"

#include "core/common/error.hpp"
#include "core/exec/reference/reference_executor.hpp"
#include "core/exec/sim/sim_executor.hpp"

namespace zb {

std::unique_ptr<Executor> make_executor(Backend backend) {
  switch (backend) {
    case Backend::sim:
      return std::make_unique<sim::SimExecutor>();
    case Backend::reference:
      return std::make_unique<reference::ReferenceExecutor>(reference::ReferenceOptions::from_environment());
    case Backend::cuda: {
#ifdef ZEPPELIN_HAVE_CUDA
      const char* found = "CUDA was found";
#else
      const char* found = "CUDA was not found when this build was configured";
#endif
      throw Error(ExitCode::bad_input, Location{},
                  std::string("backend cuda is not available in this build yet (") + found + ")", "use --backend sim");
    }
  }
  throw Error(ExitCode::bad_input, Location{}, "unknown backend");
}

}  // namespace zb
