// The strategy registry: factories by name, filled by each strategy file's StrategyRegistration, and
// make_strategy, which completes and checks a system's options before calling its factory.
#include <chrono>
#include <utility>

#include "core/common/error.hpp"
#include "core/config/json_reader.hpp"
#include "core/strategies/registration.hpp"
#include "core/strategies/tensor_parallel.hpp"

namespace zb {
namespace {

// Written only by StrategyRegistration during static initialisation, read-only afterwards (the same
// rule as the system catalog, which rejects late registrations before this list is touched).
std::vector<std::pair<std::string, StrategyFactory>>& factories() {
  static std::vector<std::pair<std::string, StrategyFactory>> registered;  // constructed on first use
  return registered;
}

std::string joined(const std::vector<std::string>& names, const char* separator) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : separator) + name;
  return out;
}

// The loader has checked scenario files already; this catches systems built in code (tests, tools)
// with a misspelt option, a wrong type or a value the strategy's hook rejects, with the same messages.
void check_options(const SystemInfo& info, const SystemSpec& system, const std::string& file,
                   int world_size) {
  ProblemList problems;
  const auto where = [&](const std::string& option) {
    return Location{file, "systems." + system.label + (option.empty() ? "" : "." + option)};
  };
  std::vector<std::string> option_names;
  for (const SystemOption& option : info.options) option_names.push_back(option.name);
  for (const auto& [key, value] : system.options.items()) {
    const SystemOption* option = info.find_option(key);
    if (option == nullptr) {
      problems.add(
          where(key), "unknown option \"" + key + "\" of system \"" + info.name + "\"",
          option_names.empty() ? "it takes no options" : "its options: " + joined(option_names, ", "));
    } else if (std::string problem = check_option_value(*option, value); !problem.empty()) {
      problems.add(where(key), problem + ", got " + describe_json(value),
                   "default: " + format_option_value(option->default_value));
    }
  }
  if (problems.empty()) {
    for (const OptionProblem& problem : info.check(system.options, SystemCheckContext{world_size})) {
      problems.add(where(problem.option), problem.what, problem.hint);
    }
  }
  problems.throw_if_any();
}

}  // namespace

StrategyRegistration::StrategyRegistration(SystemInfo info, StrategyFactory factory) {
  std::string name = info.name;
  register_system(std::move(info));  // first: it aborts on a duplicate name
  factories().emplace_back(std::move(name), factory);
}

StrategyFactory find_strategy_factory(std::string_view name) {
  for (const auto& [registered, factory] : factories()) {
    if (registered == name) return factory;
  }
  return nullptr;
}

std::vector<std::string> strategy_names() {
  std::vector<std::string> names;
  for (const SystemInfo& system : system_catalog()) {
    if (find_strategy_factory(system.name) != nullptr) names.push_back(system.name);
  }
  return names;
}

plan::Plan timed_plan(const Strategy& strategy, const Batch& batch) {
  const auto t0 = std::chrono::steady_clock::now();
  plan::Plan p = strategy.make_plan(batch);
  p.planner_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return p;
}

CostModel planner_cost_model(const Scenario& scenario, const CostModel& exact) {
  if (scenario.planner_error <= 0) return exact;
  // A stream of its own, so the errors do not repeat the workload's draws from the same seed.
  return exact.with_planner_error({scenario.planner_error, scenario.seed ^ 0x706C616E6E657231ULL});
}

std::unique_ptr<Strategy> make_strategy(const SystemSpec& system, const Scenario& scenario,
                                        const CostModel& cost) {
  const std::string file = scenario.source_file.string();
  const SystemInfo* info = find_system(system.name);
  const StrategyFactory factory = find_strategy_factory(system.name);
  if (info == nullptr || factory == nullptr) {
    throw_input_error({file, "systems"}, "unknown system '" + system.name + "'",
                      "known systems: " + joined(strategy_names(), ", "));
  }
  SystemSpec complete = system;
  complete.options = info->with_defaults(system.options);
  // The cost model's cluster is the one the plan is made for (it is built from the scenario's); under
  // tensor parallelism the strategy plans for the grid of TP groups.
  const int t = scenario.parallelism.tensor;
  check_options(*info, complete, file, cost.cluster().world_size() / t);
  if (t > 1) return make_tensor_parallel_strategy(factory, complete, scenario, cost);
  return factory(complete, scenario, cost);
}

}  // namespace zb
