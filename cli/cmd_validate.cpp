// `zeppelin-bench validate SCENARIO...`: checks scenario files without running anything, reporting every
// problem of every file, so a user can fix them all in one go and CI can check the scenario library.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "cli/profile_flag.hpp"
#include "core/config/scenario_loader.hpp"
#include "core/run/preflight.hpp"
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
                         reports::terminal_field(summary_of(scenario)));
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
