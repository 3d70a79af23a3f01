#include "reports/atomic_write.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "core/common/error.hpp"

namespace zb::reports {
namespace {

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what) {
  Location where;
  where.file = path.string();
  throw_runtime_error(where, what, "check that the output folder exists and is writable");
}

// It starts with a dot so a half-written file never looks like a report.
std::filesystem::path temporary_name_for(const std::filesystem::path& path) {
  return path.parent_path() / fmt::format(".{}.{}", path.filename().string(), unique_temporary_suffix());
}

}  // namespace

std::string unique_temporary_suffix() {
  const auto ticks = std::chrono::steady_clock::now().time_since_epoch().count();
  return fmt::format("tmp-{}-{}", static_cast<long long>(getpid()), static_cast<long long>(ticks));
}

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  const std::filesystem::path target = path.has_parent_path() ? path : std::filesystem::path(".") / path;
  std::error_code error;
  std::filesystem::create_directories(target.parent_path(), error);
  if (error) fail(target.parent_path(), fmt::format("cannot create the output folder: {}", error.message()));

  const std::filesystem::path temporary = temporary_name_for(target);
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) fail(temporary, "cannot create a temporary file for the report");
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      out.close();
      std::filesystem::remove(temporary, error);
      fail(target, "writing the report failed (disk full?)");
    }
  }
  // rename(2) within one folder replaces the destination atomically on POSIX file systems.
  std::filesystem::rename(temporary, target, error);
  if (error) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    fail(target, fmt::format("cannot move the report into place: {}", error.message()));
  }
}

}  // namespace zb::reports
