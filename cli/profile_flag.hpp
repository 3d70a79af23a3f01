#pragma once
// `--profile FILE` on run, plan and validate: a hardware-profile file (docs/SCENARIOS.md,
// "hardware_profile") that replaces the scenario's own, to try a measured or hypothetical GPU without
// editing the scenario. Read once before any scenario, so a bad profile is one error naming the file.
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "core/config/scenario.hpp"

namespace zb::cli {

void add_profile_option(CLI::App& command, std::string& file);

// The profile the flag names, with its path made absolute (a scenario's relative path would resolve
// against the scenario's folder, so the report's effective scenario must not hold a relative one);
// nullopt when the flag was not given. Throws zb::Error (exit 2) naming the file and the key.
[[nodiscard]] std::optional<HardwareProfileSpec> read_profile_flag(const std::string& file);

}  // namespace zb::cli
