#include <chrono>

#include "core/common/error.hpp"
#include "core/strategies/baselines.hpp"

namespace zb {

plan::Plan timed_plan(const Strategy& strategy, const Batch& batch) {
  const auto t0 = std::chrono::steady_clock::now();
  plan::Plan p = strategy.make_plan(batch);
  p.planner_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return p;
}

std::vector<std::string> strategy_names() { return {"zeppelin", "ring-cp", "uniform-cp"}; }

std::unique_ptr<Strategy> make_strategy(const SystemSpec& system, const Scenario& scenario, const CostModel& cost) {
  if (system.name == "zeppelin") return make_zeppelin(system, scenario, cost);
  if (system.name == "ring-cp") return make_ring_cp(system, scenario, cost);
  if (system.name == "uniform-cp") return make_uniform_cp(system, scenario, cost);
  std::string known;
  for (const auto& n : strategy_names()) known += (known.empty() ? "" : ", ") + n;
  throw_input_error({scenario.source_file.string(), "systems"}, "unknown system '" + system.name + "'",
                    "known systems: " + known);
}

}  // namespace zb
