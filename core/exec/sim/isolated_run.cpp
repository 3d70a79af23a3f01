// simulate_isolated: one SimGrid run in a forked child (why: simulate.hpp). The child inherits the
// platform and task graph by copy-on-write, so nothing but the result crosses the pipe:
//   status (uint32: 0 ok, 1 failed, 2 out of memory), then either n (uint64) and n starts and n ends
//   (doubles), or a message length (uint64) and the message.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "core/common/error.hpp"
#include "core/exec/sim/simulate.hpp"

namespace zb::sim {

namespace {

bool write_all(int fd, const void* data, std::size_t size) {
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// Reads up to `size` bytes (fewer only at the end of the pipe); returns how many were read.
std::size_t read_up_to(int fd, void* data, std::size_t size) {
  auto* p = static_cast<char*>(data);
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::read(fd, p + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  return done;
}

// Reads and drops whatever the child still writes, so that it never blocks on a full pipe.
void drain(int fd) {
  char buffer[1 << 12];
  while (read_up_to(fd, buffer, sizeof buffer) == sizeof buffer) {
  }
}

// What came back through the pipe. The times are read straight into their vectors: a run's result is
// 16 bytes per task (hundreds of MB at 16k GPUs), and reading it into one growing string first, then
// copying it out, held it up to three times over.
struct ChildResult {
  bool complete_header = false;
  std::uint32_t status = 1;
  std::string message;
  bool truncated = false;
  TaskTimes times;
};

ChildResult read_result(int fd) {
  ChildResult r;
  std::uint64_t n = 0;
  r.complete_header = read_up_to(fd, &r.status, sizeof r.status) == sizeof r.status &&
                      read_up_to(fd, &n, sizeof n) == sizeof n;
  if (!r.complete_header) return r;
  if (r.status == 0) {
    // The pipe holds at most what the child wrote; a count past that is caught as truncation below
    // without allocating for it first.
    const auto bytes_each = n * sizeof(double);
    if (n > (std::uint64_t{1} << 40)) {
      r.truncated = true;
      return r;
    }
    r.times.start.resize(n);
    r.times.end.resize(n);
    r.truncated = read_up_to(fd, r.times.start.data(), bytes_each) != bytes_each ||
                  read_up_to(fd, r.times.end.data(), bytes_each) != bytes_each;
  } else if (r.status == 1) {
    r.message.resize(std::min<std::uint64_t>(n, std::uint64_t{1} << 20));
    r.message.resize(read_up_to(fd, r.message.data(), r.message.size()));
  }
  return r;
}

[[noreturn]] void child_main(int fd, const Platform& platform, const TaskGraph& graph) {
  std::uint32_t status = 0;
  std::string message;
  TaskTimes times;
  try {
    times = simulate_in_this_process(platform, graph);
  } catch (const std::bad_alloc&) {
    status = 2;  // out of memory: the parent throws std::bad_alloc again, for the caller's message
  } catch (const std::exception& e) {
    status = 1;
    message = e.what();
  }
  bool ok = write_all(fd, &status, sizeof status);
  if (status == 0) {
    const std::uint64_t n = times.start.size();
    ok = ok && write_all(fd, &n, sizeof n) && write_all(fd, times.start.data(), n * sizeof(double)) &&
         write_all(fd, times.end.data(), n * sizeof(double));
  } else {
    const std::uint64_t n = message.size();
    ok = ok && write_all(fd, &n, sizeof n) && write_all(fd, message.data(), n);
  }
  ::close(fd);
  // _exit: no atexit handlers, no static destructors, no flushing of stdio buffers the parent also holds.
  ::_exit(ok ? 0 : 1);
}

Error simulation_error(const std::string& what) {
  return Error(ExitCode::runtime, Location{}, "simulation failed: " + what);
}

}  // namespace

TaskTimes simulate_isolated(const Platform& platform, const TaskGraph& graph) {
  // Unflushed stdio output would be inherited by the child and could be written twice.
  std::fflush(nullptr);
  int fds[2];
  if (::pipe(fds) != 0) throw simulation_error(std::string("pipe: ") + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw simulation_error(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    child_main(fds[1], platform, graph);
  }
  ::close(fds[1]);
  ChildResult result = read_result(fds[0]);  // read before waiting: the child blocks on a full pipe
  drain(fds[0]);
  ::close(fds[0]);
  int wait_status = 0;
  while (::waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
  }
  if (!result.complete_header) {
    const std::string how = WIFSIGNALED(wait_status)
                                ? "killed by signal " + std::to_string(WTERMSIG(wait_status))
                                : "exit status " + std::to_string(WEXITSTATUS(wait_status));
    throw simulation_error("the SimGrid child process ended without a result (" + how + ")");
  }
  if (result.status == 2) throw std::bad_alloc();
  if (result.status != 0) throw simulation_error(result.message);
  if (result.truncated) throw simulation_error("truncated result from the SimGrid child");
  return std::move(result.times);
}

}  // namespace zb::sim
