// uniform-cp: fixed-degree CP (CP = C, DP = N/C). FFD packs of C·M tokens are dealt round-robin to the
// D = N/C groups of consecutive ranks; each group runs a zigzag ring over its C ranks. "degree": "auto"
// plans every divisor C of N and keeps the feasible one with the least predicted time.
#include <optional>
#include <string>

#include "core/strategies/packed_cp.hpp"
#include "core/strategies/registration.hpp"

namespace zb {
namespace {

class UniformCp final : public Strategy {
 public:
  // `degree` is complete and checked (registration below): "auto", or a divisor of the world size.
  UniformCp(const SystemSpec& system, const Scenario& scenario, const CostModel& cost)
      : setup_{system.label, system.name, 0, scenario.passes}, cost_(cost) {
    const nlohmann::json& degree = system.options.at("degree");
    if (degree.is_number_integer()) setup_.degree = degree.get<int>();
  }

  plan::Plan make_plan(const Batch& batch) const override {
    if (setup_.degree > 0) return plan_packed_cp(setup_, cost_, batch.lengths);
    // auto: the best feasible degree by the cost model's prediction; all infeasible → the widest's OOM.
    const int world = cost_.cluster().world_size();
    std::optional<plan::Plan> best;
    plan::Plan widest;
    for (int c = 1; c <= world; ++c) {
      if (world % c != 0) continue;
      PackedCpSetup s = setup_;
      s.degree = c;
      plan::Plan p = plan_packed_cp(s, cost_, batch.lengths);
      if (!p.feasible()) {
        widest = std::move(p);
      } else if (!best || p.predicted.iteration_seconds < best->predicted.iteration_seconds) {
        best = std::move(p);
      }
    }
    plan::Plan chosen = best ? std::move(*best) : std::move(widest);
    chosen.info["degree_choice"] = "auto";
    return chosen;
  }

 private:
  PackedCpSetup setup_;
  const CostModel& cost_;
};

std::unique_ptr<Strategy> make_uniform_cp(const SystemSpec& system, const Scenario& scenario, const CostModel& cost) {
  return std::make_unique<UniformCp>(system, scenario, cost);
}

// A fixed degree must split the world into whole groups; the option type cannot say that.
std::vector<OptionProblem> check_degree(const nlohmann::json& options, const SystemCheckContext& context) {
  const nlohmann::json& degree = options.at("degree");
  if (!context.world_size || !degree.is_number_integer()) return {};
  const auto c = degree.get<std::int64_t>();
  if (*context.world_size % c == 0) return {};
  return {{"degree",
           "degree " + std::to_string(c) + " does not divide the world size " +
               std::to_string(*context.world_size) + " (nodes x gpus_per_node)",
           "choose a divisor of the world size, or \"auto\""}};
}

const StrategyRegistration registration{
    SystemInfo{
        .name = "uniform-cp",
        .description =
            "Uniform context parallelism: fixed degree C, N/C data-parallel groups, packs dealt round-robin",
        .order = 20,
        .baseline = true,
        .options = {SystemOption{
            .name = "degree",
            .type = OptionType::positive_int_or_auto,
            .default_value = "auto",
            .choices = {},
            .description = "CP degree C; must divide the world size; auto = the best feasible C",
        }},
        .validate = check_degree,
    },
    make_uniform_cp};

}  // namespace
}  // namespace zb
