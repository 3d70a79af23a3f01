// `zeppelin-bench plan SCENARIO [--system LABEL] [--iteration I] [--format text|json]
// [--detail summary|compact|full] [--profile FILE] [--verify]`: prints the Plan one strategy makes for one
// iteration's batch, as the JSON interface (docs/PLAN_FORMAT.md) or a human summary. This is how a user
// sees what Zeppelin decided before running anything. The JSON is streamed as it is written: a plan of a
// large cluster is never held as text in memory.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "cli/moe_gate.hpp"
#include "cli/output.hpp"
#include "cli/profile_flag.hpp"
#include "core/config/scenario_loader.hpp"
#include "core/cost/cost_model.hpp"
#include "core/lower/lower.hpp"
#include "core/lower/verify_program.hpp"
#include "core/plan/plan_format.hpp"
#include "core/plan/verify.hpp"
#include "core/run/preflight.hpp"
#include "core/strategies/strategy.hpp"
#include "core/strategies/tensor_parallel.hpp"
#include "core/workload/workload.hpp"

namespace zb::cli {
namespace {

struct PlanOptions {
  std::string scenario;
  std::string system;
  int iteration = 0;
  std::string format = "text";
  std::string detail = "compact";
  bool verify = false;
  std::string profile;  // a hardware-profile JSON replacing the scenario's
};

// An exact label wins; otherwise a strategy name that exactly one entry has.
const SystemSpec& pick_system(const Scenario& s, const std::string& wanted) {
  if (wanted.empty()) return s.systems.front();
  for (const auto& sys : s.systems) {
    if (sys.label == wanted) return sys;
  }
  const SystemSpec* by_name = nullptr;
  int matches = 0;
  for (const auto& sys : s.systems) {
    if (sys.name == wanted) {
      by_name = &sys;
      ++matches;
    }
  }
  if (matches == 1) return *by_name;
  std::string labels;
  for (const auto& sys : s.systems) labels += (labels.empty() ? "" : ", ") + sys.label;
  throw_input_error({s.source_file.string(), "systems"},
                    "--system " + wanted + (matches > 1 ? " matches several systems" : " names no system"),
                    "use one of the labels: " + labels);
}

ExitCode run_plan(const PlanOptions& o) {
  Scenario scenario = load_scenario(o.scenario);
  refuse_hydraulis_replicas_with_experts(scenario, o.scenario);
  if (auto profile = read_profile_flag(o.profile)) scenario.hardware_profile = std::move(*profile);
  if (o.iteration < 0 || o.iteration >= scenario.workload.iterations) {
    throw_input_error({o.scenario, "workload.iterations"},
                      "--iteration " + std::to_string(o.iteration) + " is out of range",
                      "the scenario has iterations 0.." + std::to_string(scenario.workload.iterations - 1));
  }
  const SystemSpec& system = pick_system(scenario, o.system);
  {
    // plan draws one batch and plans it once: size the check to that, not to the scenario's whole run.
    Scenario one = scenario;
    one.workload.iterations = 1;
    one.systems = {system};
    check_runnable(one);
  }
  const CostModel cost(scenario);
  const Workload workload(scenario);
  const CostModel planner_cost = planner_cost_model(scenario, cost);
  const auto strategy = make_strategy(system, scenario, planner_cost);
  const plan::Plan p = timed_plan(*strategy, workload.batch(o.iteration));
  if (o.format == "json") {
    const plan::Detail detail = o.detail == "full"      ? plan::Detail::full
                                : o.detail == "summary" ? plan::Detail::summary
                                                        : plan::Detail::compact;
    plan::write_json(p, detail, write_stdout);
  } else {
    write_stdout(plan::to_text(p));
  }
  if (!o.verify) return ExitCode::ok;
  auto problems = plan::verify(
      p, {.token_capacity = tensor_parallel_token_capacity(cost, scenario.parallelism.tensor),
          .heads = scenario.model.heads,
          .capacity_of_tp_width = [&](int w) { return tensor_parallel_token_capacity(cost, w); }});
  if (problems.empty() && p.feasible()) {
    // The plan's Program as every executor would run it: matching, keys, collectives, and rendezvous
    // safety (no deadlock with NCCL's unbuffered sends). Lowering itself names a malformed op.
    try {
      problems = lower::verify(lower::lower(p, cost, {.backward = scenario.passes == Passes::fwd_bwd}));
    } catch (const Error& e) {
      problems.push_back(e.what());
    }
  }
  for (const auto& problem : problems) std::fprintf(stderr, "verify: %s\n", problem.c_str());
  if (problems.empty()) {
    std::fprintf(stderr,
                 "verify: ok (coverage, data, matching, remap, memory; program: matching, keys, collectives, "
                 "rendezvous)\n");
  }
  return problems.empty() ? ExitCode::ok : ExitCode::runtime;
}

}  // namespace

void add_plan_command(CLI::App& app, CommandStatus& status) {
  CLI::App* command = app.add_subcommand("plan", "Print the plan a system makes for one iteration's batch");
  auto o = std::make_shared<PlanOptions>();
  command->add_option("SCENARIO", o->scenario, "Scenario file; required")->required()->type_name("FILE");
  command->add_option("--system", o->system,
                      "System label (or a strategy name only one entry has); default: the first system");
  command->add_option("--iteration", o->iteration, "Iteration whose batch is planned")->capture_default_str();
  command->add_option("--format", o->format, "Output form")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  command
      ->add_option("--detail", o->detail,
                   "How much of the plan --format json prints: compact (runs of repeated ops, layouts the "
                   "groups imply; what run --plan reads), full (every op and shard spelled out, for editing "
                   "by hand; run --plan reads it too) or summary (counts per rank; not runnable)")
      ->check(CLI::IsMember({"summary", "compact", "full"}))
      ->capture_default_str();
  add_profile_option(*command, o->profile);
  command->add_flag("--verify", o->verify,
                    "Also check the plan (coverage, data, memory) and its lowered program (matching, "
                    "rendezvous safety); exit 3 if it fails");
  command->callback([o, &status] { status.code = run_plan(*o); });
}

}  // namespace zb::cli
