#pragma once
// A private temporary folder (under TMPDIR, else the system's) for a command's intermediate files: the
// reports `run --out -` prints and then drops, the replayed run `report` checks before publishing. Removed,
// with everything in it, on every way out of the command.
#include <filesystem>
#include <string>

namespace zb::cli {

class ScratchFolder {
 public:
  // `purpose` names the folder ("zeppelin-bench-<purpose>.XXXXXX"); `where` (a flag or command) is where
  // the error (exit 3) points when it cannot be made.
  ScratchFolder(const std::string& purpose, const std::string& where);
  ~ScratchFolder();
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace zb::cli
