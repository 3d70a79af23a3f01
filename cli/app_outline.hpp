#pragma once
// The command line as data, read from the CLI11 app itself, so that shell completion and the man page
// (cli/cmd_completion.cpp, cli/cmd_man.cpp) cannot drift from what `--help` prints: a new flag appears in
// all three the moment it is added to its command.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace zb::cli {

struct OptionOutline {
  std::vector<std::string> names;  // "--iterations", "-q": long names first
  std::string positional;          // "SCENARIO" for a positional argument, else ""
  std::string description;
  std::string value;                 // "N", "FILE", ...; "" for a flag that takes no value
  std::vector<std::string> choices;  // a closed set of values ("sim", "reference", "cuda"), else empty
  bool files = false;                // the value names a file or folder (completed as paths)
};

struct CommandOutline {
  std::string name;
  std::string description;
  std::vector<OptionOutline> options;  // help flag excluded; positionals last
};

struct AppOutline {
  std::string name;
  std::string description;
  std::string footer;
  std::vector<CommandOutline> commands;  // in the order `--help` lists them
};

[[nodiscard]] AppOutline outline_of(const CLI::App& app);

}  // namespace zb::cli
