#include "core/exec/executor.hpp"

#include "core/common/error.hpp"
#ifdef ZEPPELIN_HAVE_CUDA_EXECUTOR
#include "core/exec/cuda/cuda_executor.hpp"
#endif
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

std::vector<std::string> shut_down_backends([[maybe_unused]] bool after_failure) {
#ifdef ZEPPELIN_HAVE_CUDA_EXECUTOR
  return cuda::shut_down_cuda(after_failure);
#else
  return {};
#endif
}

}  // namespace zb
