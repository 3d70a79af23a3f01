// uniform-cp: fixed-degree CP (CP = C, DP = N/C). Documents are balanced over the D = N/C groups of
// consecutive ranks by estimated cost and packed per group into packs of C·M tokens (or, with
// "dealing": "round-robin", FFD packs dealt round-robin); each group runs a zigzag ring over its C ranks. "degree": "auto"
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
    read_packed_cp_options(system, setup_);  // "auto" leaves 0: plan every divisor
  }

  plan::Plan make_plan(const Batch& batch) const override {
    if (setup_.degree > 0) return plan_packed_cp(setup_, cost_, batch.lengths);
    // auto: the best feasible degree by the cost model's prediction; all infeasible → the widest's OOM.
    // A degree whose compute floor (never above its plan's estimate) is no better than the best estimate
    // so far cannot win and is not planned: the same choice, without planning a 2-node ring of every
    // document to find out.
    const int world = cost_.cluster().world_size();
    std::optional<plan::Plan> best;
    plan::Plan widest;
    for (int c = 1; c <= world; ++c) {
      if (world % c != 0) continue;
      if (best && packed_cp_compute_floor(cost_, batch.lengths, c, setup_.passes) >= best->predicted.iteration_seconds) continue;
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
    chosen.info["degree_choice"] = "auto";  // info["degree"] is the degree it chose
    return chosen;
  }

 private:
  PackedCpSetup setup_;
  const CostModel& cost_;
};

std::unique_ptr<Strategy> make_uniform_cp(const SystemSpec& system, const Scenario& scenario, const CostModel& cost) {
  return std::make_unique<UniformCp>(system, scenario, cost);
}

const StrategyRegistration registration{
    SystemInfo{
        .name = "uniform-cp",
        .description =
            "Uniform context parallelism: fixed degree C, N/C data-parallel groups, documents balanced by cost",
        .order = 20,
        .baseline = true,
        .options = {degree_system_option("CP degree C; must divide the world size; auto = the best feasible C"),
                    dealing_system_option()},
        .validate = check_cp_degree,
    },
    make_uniform_cp};

}  // namespace
}  // namespace zb
