#include "core/exec/reference/launcher.hpp"

#include <charconv>
#include <cstdlib>
#include <cstring>

namespace zb::reference {
namespace {

int positive_env(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr) return 0;
  int value = 0;
  const char* end = text + std::strlen(text);
  const auto [ptr, ec] = std::from_chars(text, end, value);
  return ec == std::errc{} && ptr == end && value > 0 ? value : 0;
}

}  // namespace

bool mpi_built() {
#ifdef ZEPPELIN_HAVE_MPI
  return true;
#else
  return false;
#endif
}

int launcher_rank() {
  if (positive_env("OMPI_COMM_WORLD_SIZE") > 0) return positive_env("OMPI_COMM_WORLD_RANK");
  return positive_env("PMI_RANK");
}

int launcher_world_size() {
  if (const int open_mpi = positive_env("OMPI_COMM_WORLD_SIZE"); open_mpi > 0) return open_mpi;
  return positive_env("PMI_SIZE");
}

}  // namespace zb::reference
