#include "reports/report_set.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <system_error>

#include <fmt/format.h>

#include "core/common/error.hpp"
#include "reports/atomic_write.hpp"

namespace zb::reports {
namespace fs = std::filesystem;
namespace {

constexpr const char* choose_another =
    "choose, with --out or output.dir, a folder that can be created and written";

[[noreturn]] void fail(const fs::path& folder, const std::string& what,
                       const std::string& hint = choose_another) {
  Location where;
  where.file = folder.string();
  throw_runtime_error(where, what, hint);
}

// The absolute folder the set is published as: "out/" and "out" are the same folder, and a symbolic link
// to a folder stands for the folder it names (renaming over the link would leave the linked folder's old
// reports in place).
fs::path target_of(const fs::path& directory) {
  std::error_code error;
  fs::path target = fs::absolute(directory, error).lexically_normal();
  if (error) fail(directory, fmt::format("cannot resolve the output folder: {}", error.message()));
  if (!target.has_filename()) target = target.parent_path();
  if (fs::is_symlink(fs::symlink_status(target, error))) {
    const fs::path linked = fs::canonical(target, error);
    if (error)
      fail(target,
           fmt::format("the output folder is a symbolic link that cannot be followed: {}", error.message()));
    target = linked;
  }
  if (target == target.root_path()) fail(target, "the output folder cannot be the root of a file system");
  return target;
}

// Interrupted per-file writes of older versions leave ".report.json.tmp-..." files; they are ours too.
bool is_leftover_temporary(const std::string& name) {
  return name.size() > 1 && name.front() == '.' && name.find(".tmp-") != std::string::npos;
}

// Replacing the folder deletes what is in it, so it must hold nothing a user could want to keep.
void check_replaceable(const fs::path& target) {
  std::error_code error;
  std::vector<std::string> foreign;
  for (auto it = fs::directory_iterator(target, error); !error && it != fs::directory_iterator();
       it.increment(error)) {
    const std::string name = it->path().filename().string();
    std::error_code type_error;
    // Report files, and what an interrupted write or publication left (a temporary file, a staging
    // folder inside a mount point).
    const bool ours =
        (it->is_regular_file(type_error) && is_report_file_name(name)) || is_leftover_temporary(name);
    if (!ours) foreign.push_back(name);
  }
  if (error) fail(target, fmt::format("cannot list the output folder: {}", error.message()));
  if (foreign.empty()) return;
  std::string listed;
  for (std::size_t i = 0; i < foreign.size() && i < 5; ++i) listed += (i == 0 ? "" : ", ") + foreign[i];
  if (foreign.size() > 5) listed += fmt::format(" and {} more", foreign.size() - 5);
  fail(target,
       fmt::format(
           "the output folder holds {} that {} not reports ({}); a report set replaces its folder as a "
           "whole, which would delete {}",
           foreign.size() == 1 ? "an entry" : fmt::format("{} entries", foreign.size()),
           foreign.size() == 1 ? "is" : "are", listed, foreign.size() == 1 ? "it" : "them"),
       "choose a new or empty folder with --out or output.dir, or move those entries elsewhere");
}

// Writes, syncs and removes a small file in `folder`: permissions, a read-only mount and a full disk all
// show up here (a 4 KiB block needs space; only creating an empty file might still succeed on a full disk).
void probe_writable(const fs::path& folder, const fs::path& target) {
  const fs::path probe = folder / (".zeppelin-bench-probe." + unique_temporary_suffix());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    fail(target, fmt::format("cannot create a file in {}: {}", folder.string(), std::strerror(errno)));
  const std::string block(4096, '\0');
  bool written = true;
  int saved = 0;
  for (std::size_t done = 0; written && done < block.size();) {
    const ssize_t n = ::write(fd, block.data() + done, block.size() - done);
    if (n < 0 && errno == EINTR) continue;
    written = n > 0;
    saved = errno;
    if (written) done += static_cast<std::size_t>(n);
  }
  if (written && ::fsync(fd) != 0 && errno != EINVAL) {  // EINVAL: a file system that cannot sync (fine)
    written = false;
    saved = errno;
  }
  if (::close(fd) != 0 && written) {
    written = false;
    saved = errno;
  }
  ::unlink(probe.c_str());
  if (!written) fail(target, fmt::format("cannot write in {}: {}", folder.string(), std::strerror(saved)));
}

// The deepest part of `path` that exists: where creating the output folder would start.
fs::path existing_ancestor(const fs::path& path) {
  fs::path current = path;
  std::error_code error;
  while (!fs::exists(fs::symlink_status(current, error)) && current.has_relative_path())
    current = current.parent_path();
  return current;
}

// A folder whose file system is not its parent's (a container's or a CI job's volume): it cannot be
// renamed or swapped (EBUSY), so the set is published inside it, file by file (replace_in_place).
bool is_mount_point(const fs::path& folder) {
  struct stat own {};
  struct stat parent {};
  if (::stat(folder.c_str(), &own) != 0 || ::stat(folder.parent_path().c_str(), &parent) != 0) return false;
  return own.st_dev != parent.st_dev;
}

void warn_leftover(const fs::path& old, const std::error_code& error) {
  std::fprintf(
      stderr,
      "warning: the previous reports were moved to %s but could not be deleted (%s); delete that folder\n",
      old.c_str(), error.message().c_str());
}

// Puts the files of `staging` into `target` one by one, for a target that cannot be renamed (a mount
// point): each is renamed in (or copied first, when `staging` is on another file system) under a
// temporary name, then renamed over its final name, so every file is whole at every moment; the set as
// a whole is not swapped in one step, so a reader can briefly see old and new files side by side.
// Reports of the previous set that the new one lacks, and leftovers of interrupted runs, are removed.
void replace_in_place(const fs::path& staging, const fs::path& target) {
  std::error_code error;
  std::vector<fs::path> files;
  for (fs::directory_iterator it(staging, error), end; !error && it != end; it.increment(error))
    files.push_back(it->path());
  const std::string suffix = unique_temporary_suffix();
  std::vector<std::pair<fs::path, fs::path>> moves;  // temporary name in target → final name
  for (const fs::path& file : files) {
    if (error) break;
    const fs::path incoming = target / ("." + file.filename().string() + ".tmp-" + suffix);
    fs::rename(file, incoming, error);
    if (error) {  // another file system: copy instead
      error.clear();
      fs::copy_file(file, incoming, fs::copy_options::overwrite_existing, error);
    }
    if (!error) moves.emplace_back(incoming, target / file.filename());
  }
  std::error_code ignored;
  if (error) {
    for (const auto& move : moves) fs::remove(move.first, ignored);
    fs::remove_all(staging, ignored);
    fail(target, fmt::format("cannot write the reports into the output folder: {}", error.message()));
  }
  std::vector<std::string> keep{staging.filename().string()};
  for (const auto& move : moves)
    keep.push_back(move.first.filename().string()), keep.push_back(move.second.filename().string());
  std::vector<fs::path> stale;
  for (fs::directory_iterator it(target, ignored), end; !ignored && it != end; it.increment(ignored)) {
    const std::string name = it->path().filename().string();
    if (std::find(keep.begin(), keep.end(), name) != keep.end()) continue;
    if (is_report_file_name(name) || is_leftover_temporary(name)) stale.push_back(it->path());
  }
  for (const fs::path& path : stale) fs::remove_all(path, ignored);
  for (const auto& move : moves) {
    fs::rename(move.first, move.second, error);
    if (error) {
      fs::remove_all(staging, ignored);
      fail(target,
           fmt::format("cannot put {} in place: {}", move.second.filename().string(), error.message()));
    }
  }
  fs::remove_all(staging, ignored);
}

// Puts `staging` in place of `target`. With no folder there, one rename. With an older set there, Linux
// swaps the two folders in one step (renameat2 RENAME_EXCHANGE), so `target` always names a whole set;
// file systems without that take two renames, between which `target` is briefly absent (never mixed).
void move_into_place(const fs::path& staging, const fs::path& target) {
  if (::rename(staging.c_str(), target.c_str()) == 0) return;
  if (errno == EBUSY || errno == EXDEV) {  // a folder that cannot be renamed over (a mount point)
    replace_in_place(staging, target);
    return;
  }
  if (errno != EEXIST && errno != ENOTEMPTY) {
    const int saved = errno;
    std::error_code ignored;
    fs::remove_all(staging, ignored);
    fail(target, fmt::format("cannot move the reports into place: {}", std::strerror(saved)));
  }
  std::error_code error;
#if defined(__linux__) && defined(RENAME_EXCHANGE)
  if (::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) {
    fs::remove_all(staging, error);  // now the previous set
    if (error) warn_leftover(staging, error);
    return;
  }
#endif
  const fs::path old =
      target.parent_path() / ("." + target.filename().string() + ".old-" + unique_temporary_suffix());
  fs::rename(target, old, error);
  if (!error) fs::rename(staging, target, error);
  if (error) {
    std::error_code ignored;
    if (!fs::exists(target, ignored)) fs::rename(old, target, ignored);  // put the previous set back
    fs::remove_all(staging, ignored);
    fail(target, fmt::format("cannot replace the previous reports: {}", error.message()));
  }
  fs::remove_all(old, error);
  if (error) warn_leftover(old, error);
}

}  // namespace

bool is_report_file_name(const std::string& name) {
  if (name == "report.json" || name == "report.html" || name == "gbench.json") return true;
  const std::string_view view(name);
  return view.size() > 11 && view.substr(0, 6) == "trace-" && view.substr(view.size() - 5) == ".json";
}

fs::path check_output_folder(const fs::path& directory) {
  const fs::path target = target_of(directory);
  std::error_code error;
  const fs::file_status status = fs::status(target, error);
  if (fs::exists(status)) {
    if (!fs::is_directory(status)) fail(target, "the output folder exists and is not a folder");
    check_replaceable(target);
    probe_writable(target, target);  // deleting the previous set writes in it
  } else {
    const fs::path ancestor = existing_ancestor(target.parent_path());
    if (!fs::is_directory(ancestor, error)) {
      fail(target, fmt::format("the output folder cannot be created: {} is not a folder", ancestor.string()));
    }
    fs::create_directories(target.parent_path(), error);
    if (error)
      fail(target,
           fmt::format("cannot create the folder {}: {}", target.parent_path().string(), error.message()));
  }
  // The staging folder goes next to the target, or into it when it is a mount point.
  if (!(fs::is_directory(target, error) && is_mount_point(target)))
    probe_writable(target.parent_path(), target);
  return target;
}

std::vector<fs::path> publish_report_set(
    const fs::path& directory, const std::function<std::vector<std::string>(const fs::path&)>& write) {
  const fs::path target = check_output_folder(directory);
  // Hidden, next to the target (a rename cannot cross file systems) and unique to this run; inside the
  // target when that is a mount point (which cannot be renamed over: the set goes in file by file).
  std::error_code status_error;
  const bool in_place = fs::is_directory(target, status_error) && is_mount_point(target);
  const fs::path staging =
      in_place ? target / (".zeppelin-bench-staging.tmp-" + unique_temporary_suffix())
               : target.parent_path() / ("." + target.filename().string() + "." + unique_temporary_suffix());
  std::error_code error;
  if (!fs::create_directory(staging, error)) {
    fail(target, fmt::format("cannot create the staging folder {}: {}", staging.string(),
                             error ? error.message() : "it exists already"));
  }
  std::vector<std::string> names;
  try {
    names = write(staging);
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(staging, ignored);
    throw;
  }
  if (in_place)
    replace_in_place(staging, target);
  else
    move_into_place(staging, target);
  std::vector<fs::path> published;  // as the user wrote the folder: the paths `run` prints
  for (const std::string& name : names) published.push_back(directory / name);
  return published;
}

}  // namespace zb::reports
