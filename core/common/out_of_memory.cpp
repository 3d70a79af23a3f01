#include "core/common/out_of_memory.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>

namespace zb {
namespace {

std::string gib(std::uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / static_cast<double>(1ULL << 30));
  return text;
}

std::uint64_t physical_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page_size > 0
             ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size)
             : 0;
}

}  // namespace

std::optional<std::uint64_t> address_space_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return std::nullopt;
  return static_cast<std::uint64_t>(limit.rlim_cur);
}

Error out_of_memory_error(const std::string& activity, const std::string& who) {
  const std::optional<std::uint64_t> limit = address_space_limit();
  std::string what = "out of memory while " + activity + "; " + who;
  if (limit) {
    what += " needs more than the " + gib(*limit) + " this process may use";
  } else {
    const std::uint64_t physical = physical_memory();
    what += " needs more memory than this machine gave the process" +
            (physical > 0 ? " (" + gib(physical) + " physical)" : std::string());
  }
  return Error(ExitCode::runtime, Location{}, what,
               limit ? "raise the limit (ulimit -v, the job's memory request) or make the run smaller: fewer "
                       "cluster.nodes, workload.tokens_per_iteration or systems"
                     : "run it on a machine with more memory, or make the run smaller: fewer cluster.nodes, "
                       "workload.tokens_per_iteration or systems");
}

}  // namespace zb
