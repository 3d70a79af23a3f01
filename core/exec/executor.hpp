#pragma once
// An Executor runs a Plan and returns a Trace. One backend is one Executor: `sim` (SimGrid, the
// default), `reference` (CPU numerics), `cuda` (kernels + NCCL). Every executor runs the same Plan and
// honours its contract (core/plan/plan.hpp).
#include <memory>
#include <string>

#include "core/config/scenario.hpp"
#include "core/cost/cost_model.hpp"
#include "core/exec/trace.hpp"
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
  // Runs one iteration of the plan (every layer, the scenario's passes). A plan with `oom` is not run.
  [[nodiscard]] virtual Trace run(const plan::Plan& plan, const RunContext& context) = 0;
};

// The executor for a backend; exit code 2 with a clear message when this build lacks it.
[[nodiscard]] std::unique_ptr<Executor> make_executor(Backend backend);

}  // namespace zb
