#pragma once
// A run's reports are one set (report.json, report.html, the traces and gbench.json all describe the
// same run; a trace left from an earlier run beside them would be taken for this run's), so they are
// published as one: every file is written into a hidden staging folder next to the output folder, and
// that folder is then renamed into place. A run killed at any moment leaves either the previous set or
// the new one, never a mix, plus at worst a hidden ".<name>.tmp-*" folder. An output folder that already
// exists is replaced as a whole (old traces of systems no longer in the scenario go with it); since that
// deletes it, only a folder that holds nothing but report files is replaced, and any other is refused
// before the run starts. docs/REPORT_FORMAT.md, "The output folder".
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace zb::reports {

// Checks, in a fraction of a second and before any planning or simulation, that `directory` can take a
// report set: it is a folder or can be created as one (its parents are created), it holds only report
// files, and its parent accepts a file (a temporary one is written, synced and removed, so a read-only or
// full file system is found now rather than after the run). Returns the absolute folder the set will be
// published as. Throws zb::Error (exit code 3) naming the folder, what is wrong and what to do.
std::filesystem::path check_output_folder(const std::filesystem::path& directory);

// File names a report set consists of: report.json, report.html, gbench.json, trace-*.json.
[[nodiscard]] bool is_report_file_name(const std::string& name);

// Calls `write(staging)`, which writes the set's files into the empty folder `staging` and returns their
// names, then publishes the staging folder as `directory` (checked by check_output_folder). Returns the
// published paths, `directory` / name, spelt as `directory` was. On an error the staging folder is removed
// and the previous set is left as it was.
std::vector<std::filesystem::path> publish_report_set(
    const std::filesystem::path& directory,
    const std::function<std::vector<std::string>(const std::filesystem::path& staging)>& write);

}  // namespace zb::reports
