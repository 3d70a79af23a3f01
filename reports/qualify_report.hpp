#pragma once
// The reports of `zeppelin-bench qualify`: the console table (every figure, its floor and verdict, the
// failures named last), qualify.json and qualify.html (docs/QUALIFY.md lists their fields).
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "core/qualify/qualify_run.hpp"

namespace zb::reports {

[[nodiscard]] std::string qualify_console(const qualify::QualifyResult& result);
[[nodiscard]] nlohmann::ordered_json qualify_json(const qualify::QualifyResult& result,
                                                  const qualify::FloorSpec& floors);
[[nodiscard]] std::string qualify_html(const qualify::QualifyResult& result);

// Writes qualify.json and qualify.html into `dir` (created), each to a temporary name renamed into place,
// so a failed write never leaves half a report. Exit 3 naming the path when the folder cannot be written.
void write_qualify_reports(const qualify::QualifyResult& result, const qualify::FloorSpec& floors,
                           const std::filesystem::path& dir);

}  // namespace zb::reports
