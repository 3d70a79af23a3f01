#include "cli/scratch_folder.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>

#include "core/common/error.hpp"

namespace zb::cli {

ScratchFolder::ScratchFolder(const std::string& purpose, const std::string& where) {
  std::string pattern =
      (std::filesystem::temp_directory_path() / ("zeppelin-bench-" + purpose + ".XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr)
    throw Error(ExitCode::runtime, Location{where, "", 0, 0, -1},
                std::string("cannot make a temporary folder: ") + std::strerror(errno),
                "set TMPDIR to a writable folder");
  path_ = pattern;
}

ScratchFolder::~ScratchFolder() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace zb::cli
