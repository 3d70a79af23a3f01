#pragma once
// Every report file is written atomically: the content goes to a temporary file in the destination's own
// folder, then a rename puts it in place. A reader (a CI step, a browser reloading report.html, a second
// `compare`) therefore never sees a half-written file, and an interrupted run leaves the previous report
// intact. The destination folder is created when missing.
#include <filesystem>
#include <string>
#include <string_view>

namespace zb::reports {

// Writes `content` to `path` atomically. Throws zb::Error (exit code 3, naming the file) when the folder
// cannot be created or the file cannot be written or renamed.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

// "tmp-<pid>-<clock ticks>": unique to this process and moment, so two runs writing next to each other
// at once never pick the same temporary name.
[[nodiscard]] std::string unique_temporary_suffix();

}  // namespace zb::reports
