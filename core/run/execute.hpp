#pragma once
// Plan → Program → Trace for the run pipeline, benchmarks and tests: the one place that hands an executor
// a Program. Executors (core/exec) see only the Program; this is where a plan meets its lowering.
#include <memory>

#include "core/exec/executor.hpp"
#include "core/lower/program.hpp"
#include "core/plan/plan.hpp"

namespace zb {

// What an executor is told of `scenario` beside the Program: its seed and name, with `cost` and the
// iteration being run.
[[nodiscard]] inline ExecContext exec_context(const Scenario& scenario, const CostModel& cost,
                                              int iteration = 0) {
  return ExecContext{cost, scenario.seed, iteration, scenario.name};
}

// The Program a run executes for `plan`: the one its prediction lowered (plan.lowered), when that one was
// lowered for the passes and world this run has and lists the rows the executor reads (`rows`:
// Executor::reads_rows; the prediction lowers without them); otherwise the plan lowered now (a plan read
// from a file, predicted under a planner error, made by a caller that did not predict it, or run by an
// executor that moves real rows). Then checked (lower::verify: exit 3 naming the rank and instruction
// when it is broken or could deadlock): a Program that could deadlock under NCCL's rendezvous semantics
// must not reach any executor.
[[nodiscard]] std::shared_ptr<const lower::Program> program_for_run(const plan::Plan& plan,
                                                                    const CostModel& cost, Passes passes,
                                                                    bool rows);

// Runs `plan` of `scenario` on `executor`: program_for_run, then the executor.
[[nodiscard]] Trace execute(Executor& executor, const plan::Plan& plan, const Scenario& scenario,
                            const CostModel& cost, int iteration = 0);

}  // namespace zb
