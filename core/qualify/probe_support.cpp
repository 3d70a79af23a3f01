#include "core/qualify/probe_support.hpp"

#include <string>

#include "core/common/error.hpp"
#ifdef ZEPPELIN_HAVE_MPI
#include "core/exec/reference/mpi_run.hpp"
#endif

namespace zb::qualify {

void fill_probe_values(std::vector<float>& values, unsigned seed) {
  unsigned x = seed * 2654435761u + 1;
  for (float& v : values) {
    x = x * 1664525u + 1013904223u;
    v = static_cast<float>(x >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
}

std::unique_ptr<reference::Transport> launched_transport(const Launch& launch, const ClusterSpec& cluster,
                                                         [[maybe_unused]] std::string_view command) {
  if (launch.world_size != cluster.world_size()) {
    throw Error(ExitCode::bad_input, Location{},
                "the launcher started " + std::to_string(launch.world_size) +
                    " processes but the scenario's cluster has " + std::to_string(cluster.world_size()) +
                    " GPUs",
                "run mpirun -np " + std::to_string(cluster.world_size()));
  }
#ifdef ZEPPELIN_HAVE_MPI
  return reference::make_mpi_transport();
#else
  throw Error(ExitCode::bad_input, Location{},
              std::string(command) + " was started by a launcher but this build has no MPI",
              "install MPI (libopenmpi-dev) and reconfigure");
#endif
}

}  // namespace zb::qualify
