#include "cli/profile_flag.hpp"

#include <filesystem>

namespace zb::cli {

void add_profile_option(CLI::App& command, std::string& file) {
  command
      .add_option("--profile", file,
                  "Hardware-profile JSON (the cost model's constants), overriding the scenario's "
                  "\"hardware_profile\"")
      ->type_name("FILE")
      ->multi_option_policy(CLI::MultiOptionPolicy::Throw);
}

std::optional<HardwareProfileSpec> read_profile_flag(const std::string& file) {
  if (file.empty()) return std::nullopt;
  const std::filesystem::path absolute = std::filesystem::absolute(file).lexically_normal();
  try {
    return load_hardware_profile_file(absolute.string());
  } catch (const Error& error) {
    // Say that the flag brought the file in: the file alone does not tell which input was wrong.
    std::vector<Problem> problems = error.problems();
    for (Problem& problem : problems)
      problem.hint += problem.hint.empty() ? "(read for --profile)" : " (read for --profile)";
    throw Error(error.code(), std::move(problems));
  }
}

}  // namespace zb::cli
