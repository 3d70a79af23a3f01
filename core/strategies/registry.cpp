#include "core/common/error.hpp"
#include "core/strategies/baselines.hpp"

namespace zb {

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
