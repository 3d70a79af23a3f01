#include "core/run/execute.hpp"

#include <string>
#include <utility>
#include <vector>

#include "core/common/error.hpp"
#include "core/lower/lower.hpp"
#include "core/lower/verify_program.hpp"

namespace zb {

std::shared_ptr<const lower::Program> program_for_run(const plan::Plan& plan, const CostModel& cost,
                                                      Passes passes, bool rows) {
  const bool backward = passes == Passes::fwd_bwd;
  std::shared_ptr<const lower::Program> program = plan.lowered;
  if (!program || program->backward != backward || program->world_size != plan.world_size ||
      (rows && !program->rows))
    program = std::make_shared<const lower::Program>(lower::lower(plan, cost, {.backward = backward}));
  if (const auto problems = lower::verify(*program, 5); !problems.empty()) {
    // One problem each, not one message with newlines (which the console escapes as \x0a).
    std::vector<Problem> list;
    for (const auto& p : problems)
      list.push_back({Location{}, "the program of " + plan.system + " is invalid: " + p,
                      list.empty()
                          ? "this is a bug in the strategy; `zeppelin-bench plan --verify` shows the same"
                          : ""});
    throw Error(ExitCode::runtime, std::move(list));
  }
  return program;
}

Trace execute(Executor& executor, const plan::Plan& plan, const Scenario& scenario, const CostModel& cost,
              int iteration) {
  return executor.run(*program_for_run(plan, cost, scenario.passes, executor.reads_rows()),
                      exec_context(scenario, cost, iteration));
}

}  // namespace zb
