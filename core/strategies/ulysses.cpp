// ulysses: DeepSpeed-Ulysses head-parallel attention (deepspeed/sequence/layer.py DistributedAttention)
// and its USP variant (feifeibear/long-context-attention, yunchang/hybrid): groups of u GPUs inside a
// node shard their documents along the sequence for the linear modules and trade sequence shards for
// head shards around attention with two all-to-alls; `ring` r > 1 puts r such u-groups on a zigzag ring
// per head slice. Options, the degree choice and the registration live here; the plan in
// ulysses_plan.cpp. See docs/STRATEGIES.md § ulysses.
#include <algorithm>
#include <string>

#include "core/common/error.hpp"
#include "core/strategies/packed_cp.hpp"
#include "core/strategies/packing.hpp"
#include "core/strategies/registration.hpp"
#include "core/strategies/ulysses.hpp"

namespace zb {
namespace {

class Ulysses final : public Strategy {
 public:
  // Options are complete and pass the hook below (u·r divides the world); what needs the model and the
  // node (u | heads, K/V heads, u inside a node) is checked here, an exit-2 error naming the option.
  Ulysses(const SystemSpec& system, const Scenario& scenario, const CostModel& cost) : cost_(cost) {
    setup_.system = system.label;
    setup_.strategy = system.name;
    setup_.passes = scenario.passes;
    setup_.dealing = system.options.at("dealing").get<std::string>() == "round-robin" ? Dealing::round_robin
                                                                                      : Dealing::balanced;
    const int t = std::max(1, scenario.parallelism.tensor);
    setup_.kv_heads = std::max(1, cost.model().kv_heads / t);
    const nlohmann::json& degree = system.options.at("degree");
    const nlohmann::json& ring = system.options.at("ring");
    fixed_degree_ = degree.is_number_integer() ? degree.get<int>() : 0;
    fixed_ring_ = ring.is_number_integer() ? ring.get<int>() : 0;
    degree_choice_ = read_degree_choice(degree);
    ring_choice_ = read_degree_choice(ring);
    const Location where{scenario.source_file.string(), "systems." + system.label + ".degree"};
    if (fixed_degree_ > 0) {
      if (const std::string why = ulysses_degree_problem(cost, t, fixed_degree_); !why.empty())
        throw Error(ExitCode::bad_input, where, "ulysses degree " + std::to_string(fixed_degree_) + " " + why,
                    "choose a power of two that divides the heads and the GPUs per node, or \"auto\"");
    }
    degrees_ = ulysses_degrees(cost, t);
    // "auto" is fixed here, once for the run, from the context length (a launch script's shape): the
    // shape rule applied to a max_seq_len document, the other dimension as given ("per-batch" leaves it
    // to each batch while fixing this one).
    const UlyssesSetup launch =
        ulysses_shape(setup_, cost, degrees_, {scenario.workload.max_seq_len}, fixed_degree_, fixed_ring_);
    if (degree_choice_ == DegreeChoice::launch) fixed_degree_ = launch.degree;
    if (ring_choice_ == DegreeChoice::launch) fixed_ring_ = launch.ring;
  }

  plan::Plan make_plan(const Batch& batch) const override {
    const UlyssesSetup s = ulysses_shape(setup_, cost_, degrees_, batch.lengths, fixed_degree_, fixed_ring_);
    plan::Plan p = plan_ulysses(s, cost_, batch.lengths);
    p.info["degree_choice"] = degree_choice_name(degree_choice_);
    p.info["ring_choice"] = degree_choice_name(ring_choice_);
    return p;
  }

 private:
  UlyssesSetup setup_;
  const CostModel& cost_;
  int fixed_degree_ = 0, fixed_ring_ = 0;  // 0 = "per-batch"
  DegreeChoice degree_choice_ = DegreeChoice::launch, ring_choice_ = DegreeChoice::fixed;
  std::vector<int> degrees_;  // powers of two usable as the degree, ascending
};

std::unique_ptr<Strategy> make_ulysses(const SystemSpec& system, const Scenario& scenario,
                                       const CostModel& cost) {
  return std::make_unique<Ulysses>(system, scenario, cost);
}

std::vector<OptionProblem> check_mesh(const nlohmann::json& options, const SystemCheckContext& context) {
  if (auto problems = ulysses_degree_option_problems(options, context); !problems.empty()) return problems;
  if (!context.world_size) return {};
  const nlohmann::json& degree = options.at("degree");
  const nlohmann::json& ring = options.at("ring");
  const std::int64_t u = degree.is_number_integer() ? degree.get<std::int64_t>() : 1;
  const std::int64_t r = ring.is_number_integer() ? ring.get<std::int64_t>() : 1;
  if (*context.world_size % (u * r) == 0) return {};
  return {{degree.is_number_integer() ? "degree" : "ring",
           "degree x ring = " + std::to_string(u) + " x " + std::to_string(r) +
               " does not divide the world size " + std::to_string(*context.world_size) +
               " (nodes x gpus_per_node)",
           "choose u and r whose product divides the world size, or \"auto\""}};
}

const StrategyRegistration registration{
    SystemInfo{
        .name = "ulysses",
        .description =
            "DeepSpeed-Ulysses head parallelism: Q/K/V all-to-all inside a u-GPU group, attention over whole "
            "documents for H/u heads, O all-to-all back; ring r > 1 is USP's u x r hybrid",
        .order = 45,
        .baseline = true,
        .options = {SystemOption{
                        .name = "degree",
                        .type = OptionType::positive_int_or_auto,
                        .default_value = "auto",
                        .choices = {"per-batch"},
                        .description =
                            "Ulysses degree u (divides the heads and the GPUs per node); auto = fixed "
                            "for the run: the smallest power of two whose group holds a max_seq_len "
                            "document; per-batch = that rule on each batch (idealised)"},
                    SystemOption{
                        .name = "ring",
                        .type = OptionType::positive_int_or_auto,
                        .default_value = 1,
                        .choices = {"per-batch"},
                        .description =
                            "USP ring degree r: r u-groups on a zigzag ring per head slice (1 = plain "
                            "Ulysses); auto = fixed for the run: a ring only when a u-group cannot hold a "
                            "max_seq_len document; per-batch = that rule on each batch (idealised)"},
                    dealing_system_option()},
        .validate = check_mesh,
        .label = {},
    },
    make_ulysses};

}  // namespace
}  // namespace zb
