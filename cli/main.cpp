// zeppelin-bench: the command-line entry point. It builds the CLI11 app from the subcommands listed in
// commands.hpp and maps every failure to the exit codes of DESIGN §8, so scripts and CI can rely on them:
// 0 ok, 1 a gate or comparison failed, 2 bad input (scenario, file, flag), 3 runtime failure.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "core/common/allocator.hpp"
#include "core/common/out_of_memory.hpp"
#include "core/config/did_you_mean.hpp"
#include "reports/terminal_text.hpp"
#include "zb/build_info.hpp"

namespace {

// Built only when --version is asked for: it probes the allocator, which no other command needs.
std::string version_text() {
  const zb::ProcessAllocator allocator = zb::process_allocator();
  return fmt::format("zeppelin-bench {} (git {}, {} build, SimGrid {}, CUDA {}, MPI {}, allocator {} {})",
                     zb::build::version, zb::build::git_sha, zb::build::build_type,
                     zb::build::simgrid_version, zb::build::have_cuda ? zb::build::cuda_version : "off",
                     zb::build::have_mpi ? "on" : "off", allocator.name, allocator.version);
}

// What CLI11 alone answers "A subcommand is required" to: no arguments (the help, exit 2), `help [CMD]`
// (the help, exit 0), and a first word that is no command (exit 2 with the closest command, as git
// does). Returns the exit code when it answered, nothing when CLI11 should parse.
std::optional<int> front_door(CLI::App& app, int argc, char** argv) {
  std::vector<std::string> commands;
  for (const CLI::App* command : app.get_subcommands({})) commands.push_back(command->get_name());
  if (argc < 2 || argv[1][0] == '\0') {
    std::fputs(app.help().c_str(), stderr);
    std::fputs("error: a command is required (see the list above)\n", stderr);
    return static_cast<int>(zb::ExitCode::bad_input);
  }
  const std::string first = argv[1];
  if (first == "help") {
    if (argc == 2) {
      std::fputs(app.help().c_str(), stdout);
      return 0;
    }
    if (std::find(commands.begin(), commands.end(), argv[2]) != commands.end()) {
      // As `CMD --help` prints it (with the program's name in its usage line).
      std::vector<std::string> words{argv[2], "--help"};
      std::reverse(words.begin(), words.end());  // CLI11 takes a vector of arguments last first
      try {
        app.parse(words);
      } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : static_cast<int>(zb::ExitCode::bad_input);
      }
      return 0;
    }
    std::fprintf(stderr, "error: help: no command \"%s\"; %s\n", zb::reports::terminal_field(argv[2]).c_str(),
                 zb::suggestion_hint(argv[2], commands).c_str());
    return static_cast<int>(zb::ExitCode::bad_input);
  }
  if (!first.empty() && first.front() != '-' &&
      std::find(commands.begin(), commands.end(), first) == commands.end()) {
    std::fprintf(stderr, "error: no command \"%s\"; %s\nRun with --help for more information.\n",
                 zb::reports::terminal_field(first).c_str(), zb::suggestion_hint(first, commands).c_str());
    return static_cast<int>(zb::ExitCode::bad_input);
  }
  return std::nullopt;
}

// A mistyped flag ("run --itrations 3"): CLI11 says only that the argument was not expected; name the
// command's closest option, as a mistyped command names the closest command. Returns whether it printed.
bool suggest_an_option(const CLI::App& app) {
  const auto chosen = app.get_subcommands();
  const CLI::App& command = chosen.empty() ? app : *chosen.front();
  std::vector<std::string> names;
  for (const CLI::Option* option : command.get_options()) {
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
    for (const std::string& name : option->get_snames()) names.push_back("-" + name);
  }
  bool printed = false;
  for (const std::string& extra : command.remaining()) {
    if (extra.size() < 2 || extra.front() != '-') continue;
    const std::string flag = extra.substr(0, extra.find('='));
    std::fprintf(stderr, "error: %s: no option \"%s\"; %s\n", command.get_name().c_str(),
                 zb::reports::terminal_field(flag).c_str(), zb::suggestion_hint(flag, names).c_str());
    printed = true;
  }
  return printed;
}

int print_error(const zb::Error& error) {
  zb::cli::print_problems(error);
  return static_cast<int>(error.code());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Benchmark and profile distributed attention for LLM training on variable-length data:\n"
      "Zeppelin against context-parallel baselines, on the embedded simulator or real GPUs.",
      "zeppelin-bench"};
  app.set_version_flag("-V,--version", version_text, "Print the version and git revision, then exit");
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 ok, 1 a gate or comparison failed, 2 bad input, 3 runtime failure (including an output\n"
      "folder that cannot be written and a failed write to standard output, e.g. a full disk or closed "
      "pipe).\n"
      "Scenario file reference: docs/SCENARIOS.md");

  zb::cli::ignore_broken_pipes();
  zb::cli::CommandStatus status;
  for (const zb::cli::AddCommand add_command : zb::cli::all_commands) add_command(app, status);

  if (const std::optional<int> answered = front_door(app, argc, argv)) {
    zb::cli::check_stdout();
    return *answered;
  }
  try {
    try {
      app.parse(argc, argv);  // runs the chosen subcommand's callback
    } catch (const CLI::ExtrasError& e) {
      if (!suggest_an_option(app)) (void)app.exit(e);
      return static_cast<int>(zb::ExitCode::bad_input);
    } catch (const CLI::ParseError& e) {
      // --help and --version arrive here too, with exit code 0; every real parse error is bad input.
      const int code = app.exit(e);
      zb::cli::check_stdout();  // --help > /dev/full fails too
      return code == 0 ? 0 : static_cast<int>(zb::ExitCode::bad_input);
    }
    // Output a command printed but could not deliver is a failure whatever the command decided.
    zb::cli::check_stdout();
  } catch (const zb::Error& e) {
    return print_error(e);
  } catch (const std::bad_alloc&) {
    // What the command was doing, where it knows better (run: the system and iteration), arrives as a
    // zb::Error above; this is the rest. The unwinding has freed what the command held, so the message
    // can be built.
    const auto chosen = app.get_subcommands();
    const std::string command = chosen.empty() ? "" : " " + chosen.front()->get_name();
    return print_error(zb::out_of_memory_error("running zeppelin-bench" + command, "the command"));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", zb::reports::terminal_field(e.what()).c_str());
    return static_cast<int>(zb::ExitCode::runtime);
  }
  return static_cast<int>(status.code);
}
