#pragma once
// An Executor runs a Program (a Plan lowered by core/lower) and returns a Trace. One backend is one
// Executor: `sim` (SimGrid, the default), `reference` (CPU numerics), `cuda` (kernels + NCCL). Every
// executor runs the same Program under the execution rules of core/lower/program.hpp, and derives
// nothing of its own: relays, pairings, payloads and the backward pass are the Program's.
#include <memory>
#include <string>

#include "core/config/scenario.hpp"
#include "core/cost/cost_model.hpp"
#include "core/exec/trace.hpp"
#include "core/lower/program.hpp"
#include "core/plan/plan.hpp"

namespace zb {

struct RunContext {
  const Scenario& scenario;
  const CostModel& cost;
};

class Executor {
 public:
  virtual ~Executor() = default;
  [[nodiscard]] virtual std::string backend() const = 0;
  // Runs one iteration of the program (every layer, the program's passes). The program's plan is
  // feasible (a plan with `oom` is never lowered for running).
  [[nodiscard]] virtual Trace run(const lower::Program& program, const RunContext& context) = 0;
};

// The plan lowered as the scenario runs it (forward, and backward when its passes are fwd_bwd).
[[nodiscard]] lower::Program lower_for_run(const plan::Plan& plan, const RunContext& context);

// Lowers `plan`, checks the Program (lower::verify: exit 3 naming the rank and instruction when it is
// broken or could deadlock) and runs it on `executor`: the one call the run pipeline, benchmarks and
// tests use.
[[nodiscard]] Trace execute(Executor& executor, const plan::Plan& plan, const RunContext& context);

// The executor for a backend; exit code 2 with a clear message when this build lacks it.
[[nodiscard]] std::unique_ptr<Executor> make_executor(Backend backend);

}  // namespace zb
