#pragma once
// Reading a scenario file (docs/SCENARIOS.md) into a validated Scenario. Validation is strict and reports
// every problem it can find at once: a zb::Error (exit code 2) whose problems each name the file and the
// JSON path (and line and column for syntax errors).
#include <filesystem>
#include <string_view>

#include "core/config/scenario.hpp"

namespace zb {

// Reads and validates a scenario file. A relative "lengths_file" is resolved against the file's folder.
[[nodiscard]] Scenario load_scenario(const std::filesystem::path& file);

// Validates scenario text. `file_for_messages` names the source in messages and anchors relative paths
// (its parent folder; the current directory when it has none).
[[nodiscard]] Scenario parse_scenario(std::string_view text, const std::filesystem::path& file_for_messages);

// The keys a scenario may have at the top level, in the order docs/SCENARIOS.md documents them.
[[nodiscard]] std::vector<std::string_view> scenario_top_level_keys();

}  // namespace zb
