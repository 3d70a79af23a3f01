// `zeppelin-bench validate SCENARIO...`: checks scenario files without running anything, reporting every
// problem of every file, so a user can fix them all in one go and CI can check the scenario library.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "cli/profile_flag.hpp"
#include "core/config/scenario_loader.hpp"
#include "core/config/units.hpp"
#include "core/cost/cost_model.hpp"
#include "core/run/preflight.hpp"
#include "core/strategies/tensor_parallel.hpp"
#include "reports/terminal_text.hpp"

namespace zb::cli {
namespace {

std::string summary_of(const Scenario& scenario) {
  const ModelSpec& model = scenario.model;
  const std::string model_text =
      model.preset.empty() ? fmt::format("custom model ({} layers, hidden {})", model.layers, model.hidden)
                           : model.preset;
  return fmt::format("{}: {} node{} \u00d7 {} GPUs, {}, {} system{}", scenario.name, scenario.cluster.nodes,
                     scenario.cluster.nodes == 1 ? "" : "s", scenario.cluster.gpus_per_node, model_text,
                     scenario.systems.size(), scenario.systems.size() == 1 ? "" : "s");
}

// What one GPU's memory holds before any token (docs/METRICS.md, "Memory and token capacity"): the model
// states of the parameters it holds (1/t of a TP group's, an MoE layer's routed experts split over the
// expert degree) and the tokens left room for, so that a model that cannot fit is seen before a run.
std::string memory_of(const Scenario& scenario) {
  const int t = std::max(1, scenario.parallelism.tensor);
  const CostModel cost(scenario);
  // A TP group is one GPU of the grid, t times as large (core/strategies/tensor_parallel.hpp).
  const CostModel group = t > 1 ? cost.with_cluster(tensor_parallel_grid(scenario.cluster, t)) : cost;
  const double states = group.model_state_bytes_per_gpu() / t;
  const std::int64_t room = group.token_capacity_per_gpu();
  std::string held = format_billions(cost.params().per_gpu / t) + " of " +
                     format_billions(cost.total_params()) + " parameters";
  if (scenario.model.has_experts())
    held += fmt::format(", {} of {} experts per layer", scenario.model.moe.experts / cost.expert_degree(),
                        scenario.model.moe.experts);
  const std::string tokens = room > 0 ? fmt::format("room for {} tokens per {}", room,
                                                    t > 1 ? fmt::format("TP group of {}", t) : "GPU")
                                      : "no room for tokens: every system will report out of memory";
  return fmt::format("    memory per GPU: model states {} of {} ({}); {}\n", format_bytes(states),
                     format_bytes(scenario.cluster.gpu.memory_bytes), held, tokens);
}

// Validates each file in turn; returns the worst exit code (2 when any file is bad input). A `--profile`
// file is checked once, first, since it would replace every scenario's profile.
ExitCode validate_files(const std::vector<std::string>& files, const std::string& profile_file) {
  const std::optional<HardwareProfileSpec> profile = read_profile_flag(profile_file);
  ExitCode worst = ExitCode::ok;
  for (const std::string& file : files) {
    std::string line;
    try {
      Scenario scenario = load_scenario(file);
      if (profile) scenario.hardware_profile = *profile;
      check_runnable(
          scenario);  // what run would refuse beyond the file itself: its workload source, its size
      line = fmt::format("ok  {}  ({})\n", reports::terminal_field(file),
                         reports::terminal_field(summary_of(scenario))) +
             memory_of(scenario);
    } catch (const Error& e) {
      print_problems(e);
      if (static_cast<int>(e.code()) > static_cast<int>(worst)) worst = e.code();
    }
    write_stdout(line);  // outside the try: a failed write ends the command, it is no problem of the file
  }
  return worst;
}

}  // namespace

void add_validate_command(CLI::App& app, CommandStatus& status) {
  CLI::App* command = app.add_subcommand(
      "validate", "Check scenario files and report every problem (exit code 2 if any file is invalid)");
  // Shared with the callback, which runs after parsing; owned by the subcommand's lifetime via shared_ptr.
  auto files = std::make_shared<std::vector<std::string>>();
  auto profile = std::make_shared<std::string>();
  command->add_option("SCENARIO", *files, "Scenario files (JSON with // comments) to check; required")
      ->required()
      ->type_name("FILE");
  add_profile_option(*command, *profile);
  command->callback([files, profile, &status] { status.code = validate_files(*files, *profile); });
}

}  // namespace zb::cli
