#pragma once
// The reference backend's view of the launch (core/exec/launch/launcher.hpp says how it is detected):
// whether this build can join a multi-process launch at all.
namespace zb::reference {

// Whether this build has the MPI transport (defined where ZEPPELIN_HAVE_MPI is known).
[[nodiscard]] bool mpi_built();

}  // namespace zb::reference
