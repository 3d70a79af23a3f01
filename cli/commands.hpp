#pragma once
// The subcommands of zeppelin-bench. Each lives in its own file, cli/cmd_<name>.cpp, and exposes one
// function that adds it to the app. To add a command:
//   1. write cli/cmd_<name>.cpp with `void add_<name>_command(CLI::App&, CommandStatus&)`;
//   2. declare it below and append it to `all_commands`;
//   3. add the file to cli/CMakeLists.txt.
// A command's callback reports its exit code through CommandStatus; an error that stops it is thrown as
// zb::Error, which main prints and maps to the error's exit code (DESIGN §8).
#include <array>

#include <CLI/CLI.hpp>

#include "core/common/error.hpp"

namespace zb::cli {

struct CommandStatus {
  ExitCode code = ExitCode::ok;
};

using AddCommand = void (*)(CLI::App& app, CommandStatus& status);

void add_validate_command(CLI::App& app, CommandStatus& status);
void add_list_command(CLI::App& app, CommandStatus& status);
void add_plan_command(CLI::App& app, CommandStatus& status);
void add_run_command(CLI::App& app, CommandStatus& status);
void add_compare_command(CLI::App& app, CommandStatus& status);
void add_report_command(CLI::App& app, CommandStatus& status);
void add_qualify_command(CLI::App& app, CommandStatus& status);
void add_calibrate_command(CLI::App& app, CommandStatus& status);
void add_completion_command(CLI::App& app, CommandStatus& status);
void add_man_command(CLI::App& app, CommandStatus& status);

// In the order `zeppelin-bench --help` lists them.
inline constexpr std::array<AddCommand, 10> all_commands{
    &add_run_command,        &add_plan_command,      &add_compare_command,  &add_report_command,
    &add_qualify_command,    &add_calibrate_command, &add_validate_command, &add_list_command,
    &add_completion_command, &add_man_command};

}  // namespace zb::cli
