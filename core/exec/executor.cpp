#include "core/exec/executor.hpp"

#include "core/common/error.hpp"
#include "core/exec/sim/sim_executor.hpp"

namespace zb {

std::unique_ptr<Executor> make_executor(Backend backend) {
  switch (backend) {
    case Backend::sim:
      return std::make_unique<sim::SimExecutor>();
    case Backend::reference:
      throw Error(ExitCode::bad_input, Location{}, "backend reference is not available in this build yet",
                  "use --backend sim");
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
