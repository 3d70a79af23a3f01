#include "cli/output.hpp"

#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "reports/terminal_text.hpp"

namespace zb::cli {
namespace {

[[noreturn]] void stdout_failed(const std::string& why, bool closed_pipe) {
  Location where;
  where.file = "standard output";
  throw_runtime_error(where, "cannot write: " + why,
                      closed_pipe
                          ? "the program reading the output exited before it was written; reports, if any, "
                            "were written first"
                          : "check where standard output goes: a full disk, a closed terminal or a device");
}

[[noreturn]] void stdout_failed(int error) {
  stdout_failed(std::strerror(error), error == EPIPE);
}

}  // namespace

void ignore_broken_pipes() {
  std::signal(SIGPIPE, SIG_IGN);
}

void write_stdout(std::string_view raw) {
  const std::string text = reports::terminal_text(raw);
  if (std::fflush(stdout) != 0) stdout_failed(errno);  // earlier buffered output goes first
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(STDOUT_FILENO, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) stdout_failed(n < 0 ? errno : EIO);
    done += static_cast<std::size_t>(n);
  }
}

void check_stdout() {
  if (std::fflush(stdout) != 0) stdout_failed(errno);
  // An earlier buffered write failed; its errno is long gone.
  if (std::ferror(stdout) != 0) stdout_failed("an earlier write failed", false);
}

void print_problems(const Error& error) {
  for (const Problem& problem : error.problems()) {
    std::fprintf(stderr, "error: %s\n", reports::terminal_field(problem.str()).c_str());
  }
}

void print_progress(const std::string& line) {
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

}  // namespace zb::cli
