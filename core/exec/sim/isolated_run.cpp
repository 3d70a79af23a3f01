// simulate_isolated: one SimGrid run in a forked child (why: simulate.hpp). The child inherits the
// platform and task graph by copy-on-write, so nothing but the result crosses the pipe:
//   status (uint32: 0 ok, 1 failed, 2 out of memory), then either n (uint64) and n starts and n ends
//   (doubles), or a message length (uint64) and the message.
#include <sys/wait.h>
#include <unistd.h>

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

std::string read_all(int fd) {
  std::string out;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  return out;
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
  const std::string bytes = read_all(fds[0]);  // read before waiting: the child blocks on a full pipe
  ::close(fds[0]);
  int wait_status = 0;
  while (::waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
  }
  std::uint32_t status = 1;
  std::uint64_t n = 0;
  const std::size_t header = sizeof status + sizeof n;
  if (bytes.size() < header) {
    const std::string how = WIFSIGNALED(wait_status)
                                ? "killed by signal " + std::to_string(WTERMSIG(wait_status))
                                : "exit status " + std::to_string(WEXITSTATUS(wait_status));
    throw simulation_error("the SimGrid child process ended without a result (" + how + ")");
  }
  std::memcpy(&status, bytes.data(), sizeof status);
  std::memcpy(&n, bytes.data() + sizeof status, sizeof n);
  if (status == 2) throw std::bad_alloc();
  if (status != 0) throw simulation_error(bytes.substr(header, n));
  if (bytes.size() != header + 2 * n * sizeof(double))
    throw simulation_error("truncated result from the SimGrid child");
  TaskTimes times;
  times.start.resize(n);
  times.end.resize(n);
  if (n > 0) {  // an empty vector's data() may be null, and memcpy's arguments must not be
    std::memcpy(times.start.data(), bytes.data() + header, n * sizeof(double));
    std::memcpy(times.end.data(), bytes.data() + header + n * sizeof(double), n * sizeof(double));
  }
  return times;
}

}  // namespace zb::sim
