#pragma once
// One (system, iteration) of the run pipeline once a plan exists, shared by `run` (the strategy planned
// it) and `run --plan` (it was read from a file), so both execute and measure a plan the same way.
#include "core/exec/executor.hpp"
#include "core/run/run_result.hpp"

namespace zb {

// The facts of an iteration that the plan itself holds (feasibility, OOM reports, planner figures).
[[nodiscard]] IterationResult iteration_of(const plan::Plan& plan, int iteration);

// Executes a feasible plan, computes its metrics and appends the iteration to `system`, which keeps the
// trace and plan of its first feasible iteration. The only place the pipeline calls an executor.
void execute_iteration(Executor& executor, const RunContext& context, plan::Plan plan, IterationResult iteration,
                       SystemResult& system);

}  // namespace zb
