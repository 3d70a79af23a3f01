#include "core/exec/launch/launcher.hpp"

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include "core/common/error.hpp"

namespace zb {
namespace {

const char* const kHint =
    "start zeppelin-bench with `mpirun -np N` or `srun -n N` (or unset the variable when it was left over "
    "from another job)";

Error bad_variable(const char* name, const std::string& value, const std::string& why) {
  return Error(ExitCode::bad_input, Location{},
               std::string("launcher variable ") + name + "=\"" + value + "\" " + why, kHint);
}

// The variable as a non-negative integer; nullopt when it is not set.
std::optional<int> integer(const EnvLookup& env, const char* name) {
  const char* text = env(name);
  if (text == nullptr) return std::nullopt;
  int value = 0;
  const char* end = text + std::strlen(text);
  const auto [ptr, ec] = std::from_chars(text, end, value);
  if (ec != std::errc{} || ptr != end || value < 0)
    throw bad_variable(name, text, "is not a non-negative integer");
  return value;
}

// Slurm's compressed per-node counts, "4(x2),3" = nodes with 4, 4 and 3 tasks, expanded.
std::vector<int> tasks_per_node(const char* name, const std::string& text) {
  std::vector<int> counts;
  const char* p = text.data();
  const char* const end = p + text.size();
  while (p < end) {
    int count = 0, repeat = 1;
    auto [next, ec] = std::from_chars(p, end, count);
    if (ec != std::errc{} || count <= 0) throw bad_variable(name, text, "is not a Slurm task count list");
    p = next;
    if (p < end && *p == '(') {
      if (end - p < 3 || p[1] != 'x') throw bad_variable(name, text, "is not a Slurm task count list");
      auto [after, ec2] = std::from_chars(p + 2, end, repeat);
      if (ec2 != std::errc{} || repeat <= 0 || after >= end || *after != ')')
        throw bad_variable(name, text, "is not a Slurm task count list");
      p = after + 1;
    }
    counts.insert(counts.end(), static_cast<std::size_t>(repeat), count);
    if (p < end) {
      if (*p != ',') throw bad_variable(name, text, "is not a Slurm task count list");
      ++p;
    }
  }
  return counts;
}

void check(const Launch& l, const char* rank_var, const char* size_var) {
  if (l.world_size <= 0)
    throw Error(ExitCode::bad_input, Location{}, std::string(size_var) + " says the world has 0 processes",
                kHint);
  if (l.rank >= l.world_size)
    throw Error(ExitCode::bad_input, Location{},
                std::string(rank_var) + "=" + std::to_string(l.rank) + " is outside a world of " +
                    std::to_string(l.world_size) + " processes (" + size_var + ")",
                kHint);
  if (l.local_size <= 0 || l.local_rank >= l.local_size || l.local_size > l.world_size)
    throw Error(ExitCode::bad_input, Location{},
                "the launcher's local rank " + std::to_string(l.local_rank) + " of " +
                    std::to_string(l.local_size) + " processes on this node does not fit a world of " +
                    std::to_string(l.world_size),
                kHint);
}

std::optional<Launch> open_mpi(const EnvLookup& env) {
  const auto size = integer(env, "OMPI_COMM_WORLD_SIZE");
  if (!size) return std::nullopt;
  Launch l{.launcher = "mpirun (Open MPI)",
           .rank = integer(env, "OMPI_COMM_WORLD_RANK").value_or(0),
           .world_size = *size,
           .local_rank = integer(env, "OMPI_COMM_WORLD_LOCAL_RANK").value_or(0),
           .local_size = integer(env, "OMPI_COMM_WORLD_LOCAL_SIZE").value_or(1)};
  check(l, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE");
  return l;
}

std::optional<Launch> slurm_step(const EnvLookup& env) {
  const auto size = integer(env, "SLURM_STEP_NUM_TASKS");
  const auto rank = integer(env, "SLURM_PROCID");
  if (!size || !rank) return std::nullopt;
  Launch l{.launcher = "srun (Slurm)",
           .rank = *rank,
           .world_size = *size,
           .local_rank = integer(env, "SLURM_LOCALID").value_or(0),
           .local_size = 1};
  if (const char* per_node = env("SLURM_STEP_TASKS_PER_NODE")) {
    const auto counts = tasks_per_node("SLURM_STEP_TASKS_PER_NODE", per_node);
    const int node = integer(env, "SLURM_NODEID").value_or(0);
    if (static_cast<std::size_t>(node) >= counts.size())
      throw bad_variable("SLURM_NODEID", std::to_string(node),
                         "names a node the step's " + std::to_string(counts.size()) + " nodes do not have");
    l.local_size = counts[static_cast<std::size_t>(node)];
  } else {
    l.local_size = l.local_rank + 1;
  }
  check(l, "SLURM_PROCID", "SLURM_STEP_NUM_TASKS");
  return l;
}

std::optional<Launch> pmix(const EnvLookup& env) {
  const auto rank = integer(env, "PMIX_RANK");
  if (!rank) return std::nullopt;
  const auto size = integer(env, "PMIX_SIZE");
  if (!size) return std::nullopt;  // PMIx without a size: the PMI variables (below) may still say it
  Launch l{.launcher = "PMIx", .rank = *rank, .world_size = *size};
  l.local_rank = integer(env, "PMIX_LOCAL_RANK").value_or(0);
  l.local_size = integer(env, "PMIX_LOCAL_SIZE").value_or(l.local_rank + 1);
  check(l, "PMIX_RANK", "PMIX_SIZE");
  return l;
}

std::optional<Launch> pmi(const EnvLookup& env) {
  const auto size = integer(env, "PMI_SIZE");
  if (!size) return std::nullopt;
  Launch l{.launcher = "PMI",
           .rank = integer(env, "PMI_RANK").value_or(0),
           .world_size = *size,
           .local_rank = integer(env, "MPI_LOCALRANKID").value_or(0)};
  l.local_size = integer(env, "MPI_LOCALNRANKS").value_or(l.local_rank + 1);
  check(l, "PMI_RANK", "PMI_SIZE");
  return l;
}

}  // namespace

Launch detect_launch(const EnvLookup& env) {
  if (auto l = open_mpi(env)) return *l;
  if (auto l = slurm_step(env)) return *l;
  if (auto l = pmix(env)) return *l;
  if (auto l = pmi(env)) return *l;
  return Launch{};
}

Launch process_launch() {
  return detect_launch([](const char* name) { return std::getenv(name); });
}

std::string describe(const Launch& l) {
  if (!l.multi_process()) return "a single process (no launcher)";
  return "rank " + std::to_string(l.rank) + " of " + std::to_string(l.world_size) + " (local " +
         std::to_string(l.local_rank) + " of " + std::to_string(l.local_size) + ") under " + l.launcher;
}

}  // namespace zb
