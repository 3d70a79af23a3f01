// uniform-cp: fixed-degree CP (CP = C, DP = N/C). FFD packs of C·M tokens are dealt round-robin to the
// D = N/C groups of consecutive ranks; each group runs a zigzag ring over its C ranks. "degree": "auto"
// plans every divisor C of N and keeps the feasible one with the least predicted time.
#include <optional>

#include "core/common/error.hpp"
#include "core/strategies/baselines.hpp"
#include "core/strategies/packed_cp.hpp"

namespace zb {
namespace {

class UniformCp final : public Strategy {
 public:
  UniformCp(const SystemSpec& system, const Scenario& scenario, const CostModel& cost)
      : setup_{system.label, system.name, 0, scenario.passes}, cost_(cost) {
    const auto& degree = system.options.contains("degree") ? system.options.at("degree") : nlohmann::json("auto");
    if (degree.is_number_integer()) {
      setup_.degree = degree.get<int>();
      if (setup_.degree < 1 || cost.cluster().world_size() % setup_.degree != 0) {
        throw_input_error({scenario.source_file.string(), "systems." + system.label + ".degree"},
                          "uniform-cp degree " + std::to_string(setup_.degree) + " does not divide the world size " +
                              std::to_string(cost.cluster().world_size()));
      }
    }
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

}  // namespace

std::unique_ptr<Strategy> make_uniform_cp(const SystemSpec& system, const Scenario& scenario, const CostModel& cost) {
  return std::make_unique<UniformCp>(system, scenario, cost);
}

}  // namespace zb
