#pragma once
// `zeppelin-bench compare` (cli/cmd_compare.cpp), declared apart from commands.hpp so that file stays with
// its owner; main.cpp registers it after the commands listed there.
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"

namespace zb::cli {

void add_compare_command(CLI::App& app, CommandStatus& status);

}  // namespace zb::cli
