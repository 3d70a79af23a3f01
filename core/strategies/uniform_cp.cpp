// uniform-cp: fixed-degree CP (CP = C, DP = N/C). Documents are balanced over the D = N/C groups of
// consecutive ranks by estimated cost and packed per group into packs of C·M tokens (or, with
// "dealing": "round-robin", FFD packs dealt round-robin); each group runs a zigzag ring over its C ranks.
// "degree": "auto" fixes C for the run from the context length, as a launch script does; "per-batch"
// plans every divisor C of N on each batch and keeps the feasible one with the least predicted time.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "core/strategies/packed_cp.hpp"
#include "core/strategies/registration.hpp"

namespace zb {
namespace {

class UniformCp final : public Strategy {
 public:
  // `degree` is complete and checked (registration below): "auto", "per-batch" or a divisor of the
  // world size. "auto" is fixed here, once for the run: the smallest degree whose groups hold a document
  // of the context length.
  UniformCp(const SystemSpec& system, const Scenario& scenario, const CostModel& cost)
      : setup_{system.label, system.name, 0, scenario.passes},
        choice_(read_degree_choice(system.options.at("degree"))),
        cost_(cost) {
    read_packed_cp_options(system, setup_);  // "per-batch" leaves 0: plan every divisor
    if (choice_ == DegreeChoice::launch) {
      setup_.degree = smallest_holding_degree(cost.cluster().world_size(), [&](int c) {
        return packed_cp_fits(cost, {scenario.workload.max_seq_len}, c);
      });
    }
  }

  plan::Plan make_plan(const Batch& batch) const override {
    if (choice_ != DegreeChoice::per_batch) {
      plan::Plan p = plan_packed_cp(setup_, cost_, batch.lengths);
      p.info["degree_choice"] = degree_choice_name(choice_);
      return p;
    }
    // per-batch: the feasible degree with the least predicted time, the smallest on ties; all infeasible →
    // the widest's OOM. Planning a degree costs far more than bounding it, so each feasible degree gets two
    // floors, both never above its plan's prediction: the compute floor and the whole-iteration floor
    // (packed_cp.hpp: compute or its inter-node K/V relay, plus the parts outside the layers; kept a hair
    // below itself so that rounding cannot skip a winner). A degree whose floor is above the best
    // prediction so far, or equal to it from a larger degree, cannot win and is not planned. With balanced
    // dealing the degrees are planned lowest floor first, so the winner usually comes first and the rest
    // are skipped; round-robin keeps ascending order (the compute floor bounds the balanced plan, and in
    // that order it skips exactly what it always did). Either way the same choice as planning every degree.
    const int world = cost_.cluster().world_size();
    struct Degree {
      int c;
      double compute_floor, floor;
    };
    std::vector<Degree> degrees;
    for (int c = 1; c <= world; ++c) {
      if (world % c != 0 || !packed_cp_fits(cost_, batch.lengths, c)) continue;
      degrees.push_back(
          {c, packed_cp_compute_floor(cost_, batch.lengths, c, setup_.passes),
           packed_cp_prediction_floor(cost_, batch.lengths, c, setup_.passes, setup_.dealing) * (1 - 1e-9)});
    }
    if (setup_.dealing == Dealing::balanced) {
      std::stable_sort(degrees.begin(), degrees.end(), [](const Degree& a, const Degree& b) {
        return std::max(a.compute_floor, a.floor) < std::max(b.compute_floor, b.floor);
      });
    }
    std::optional<plan::Plan> best;
    int best_c = 0;
    for (const Degree& d : degrees) {
      if (best) {
        const double bar = best->predicted.iteration_seconds;
        const double floor = std::max(d.compute_floor, d.floor);
        if (floor > bar || (floor >= bar && d.c > best_c)) continue;
      }
      PackedCpSetup s = setup_;
      s.degree = d.c;
      plan::Plan p = plan_packed_cp(s, cost_, batch.lengths);
      const double t = p.predicted.iteration_seconds;
      if (!best || t < best->predicted.iteration_seconds ||
          (t == best->predicted.iteration_seconds && d.c < best_c)) {
        best = std::move(p);
        best_c = d.c;
      }
    }
    plan::Plan widest;
    if (!best) {
      PackedCpSetup s = setup_;
      s.degree = world;
      widest = plan_packed_cp(s, cost_, batch.lengths);
    }
    plan::Plan chosen = best ? std::move(*best) : std::move(widest);
    chosen.info["degree_choice"] = degree_choice_name(choice_);  // info["degree"] is the degree it chose
    return chosen;
  }

 private:
  PackedCpSetup setup_;
  DegreeChoice choice_;
  const CostModel& cost_;
};

std::unique_ptr<Strategy> make_uniform_cp(const SystemSpec& system, const Scenario& scenario,
                                          const CostModel& cost) {
  return std::make_unique<UniformCp>(system, scenario, cost);
}

const StrategyRegistration registration{
    SystemInfo{
        .name = "uniform-cp",
        .description = "Uniform context parallelism: fixed degree C, N/C data-parallel groups, documents "
                       "balanced by cost",
        .order = 20,
        .baseline = true,
        .options = {degree_system_option(
                        "CP degree C; must divide the world size; auto = fixed for the run: the smallest "
                        "power of two whose groups hold a max_seq_len document; per-batch = the C with the "
                        "least predicted time on each batch (idealised)",
                        {"per-batch"}),
                    dealing_system_option()},
        .validate = check_cp_degree,
        .label = {},
    },
    make_uniform_cp};

}  // namespace
}  // namespace zb
