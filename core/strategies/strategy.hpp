#pragma once
// A Strategy turns one batch into a Plan. Each baseline and Zeppelin is one implementation of this
// interface and nothing else; the CLI, executors and reports never know which strategy made a plan.
#include <memory>
#include <string>
#include <vector>

#include "core/config/scenario.hpp"
#include "core/cost/cost_model.hpp"
#include "core/plan/plan.hpp"
#include "core/workload/workload.hpp"

namespace zb {

class Strategy {
 public:
  virtual ~Strategy() = default;
  // Plans one batch. Infeasible batches give a Plan with `oom` filled (never an exception);
  // bad options were rejected when the scenario was read.
  [[nodiscard]] virtual plan::Plan make_plan(const Batch& batch) const = 0;
};

// Builds the strategy a scenario entry names, from the registry (registration.hpp): fills in the
// option defaults and checks the options (an Error with exit code 2 and the JSON path when they are
// wrong) before calling the strategy's factory. The cost model must outlive the strategy.
[[nodiscard]] std::unique_ptr<Strategy> make_strategy(const SystemSpec& system, const Scenario& scenario,
                                                      const CostModel& cost);

// The cost model the scenario's planners see: `exact` with the scenario's planner_error drawn from its
// seed (CostModel's PlannerError), or `exact` itself when the error is 0. Executors keep `exact`.
[[nodiscard]] CostModel planner_cost_model(const Scenario& scenario, const CostModel& exact);

// Plans a batch and records the wall-clock planning time in plan.planner_seconds.
[[nodiscard]] plan::Plan timed_plan(const Strategy& strategy, const Batch& batch);

// The registered strategies in listing order, for error messages (`list systems` prints the catalog).
[[nodiscard]] std::vector<std::string> strategy_names();

}  // namespace zb
