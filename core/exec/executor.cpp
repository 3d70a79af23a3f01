#include "core/exec/executor.hpp"

#include "core/common/error.hpp"
#include "core/exec/reference/reference_executor.hpp"
#ifdef ZEPPELIN_HAVE_CUDA_EXECUTOR
#include "core/exec/cuda/cuda_executor.hpp"
#endif
#include "core/exec/sim/sim_executor.hpp"
#include "core/lower/lower.hpp"
#include "core/lower/verify_program.hpp"

namespace zb {

lower::Program lower_for_run(const plan::Plan& plan, const RunContext& context) {
  return lower::lower(plan, context.cost, {.backward = context.scenario.passes == Passes::fwd_bwd});
}

Trace execute(Executor& executor, const plan::Plan& plan, const RunContext& context) {
  const lower::Program program = lower_for_run(plan, context);
  // A program that could deadlock under NCCL's rendezvous semantics must not reach any executor: the
  // reference would run it (its sends are buffered) and the simulator would stop mid-way.
  if (const auto problems = lower::verify(program, 5); !problems.empty()) {
    // One problem each, not one message with newlines (which the console escapes as \x0a).
    std::vector<Problem> list;
    for (const auto& p : problems)
      list.push_back({Location{}, "the program of " + plan.system + " is invalid: " + p,
                      list.empty()
                          ? "this is a bug in the strategy; `zeppelin-bench plan --verify` shows the same"
                          : ""});
    throw Error(ExitCode::runtime, std::move(list));
  }
  return executor.run(program, context);
}

std::unique_ptr<Executor> make_executor(Backend backend) {
  switch (backend) {
    case Backend::sim:
      return std::make_unique<sim::SimExecutor>();
    case Backend::reference:
      return std::make_unique<reference::ReferenceExecutor>(reference::ReferenceOptions::from_environment());
    case Backend::cuda: {
#ifdef ZEPPELIN_HAVE_CUDA_EXECUTOR
      return std::make_unique<cuda::CudaExecutor>(cuda::CudaOptions::from_environment());
#else
#ifdef ZEPPELIN_HAVE_CUDA
      const char* missing = "NCCL was not found when this build was configured";
#else
      const char* missing = "CUDA was not found when this build was configured";
#endif
      throw Error(ExitCode::bad_input, Location{},
                  std::string("backend cuda is not available in this build (") + missing + ")",
                  "use --backend sim, or install the CUDA toolkit with NCCL and reconfigure");
#endif
    }
  }
  throw Error(ExitCode::bad_input, Location{}, "unknown backend");
}

std::vector<std::string> shut_down_backends([[maybe_unused]] bool after_failure) {
#ifdef ZEPPELIN_HAVE_CUDA_EXECUTOR
  return cuda::shut_down_cuda(after_failure);
#else
  return {};
#endif
}

}  // namespace zb
