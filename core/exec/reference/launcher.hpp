#pragma once
// What the process launcher says about this process: how many processes mpirun (or a PMI launcher such
// as srun or MPICH's hydra) started. The reference executor uses it to pick the MPI transport and to
// refuse a world that does not match (a non-MPI build, or a binary linked against another MPI, started
// under a multi-rank launcher sees a world of one and would silently run every rank N times).
namespace zb::reference {

// The process count a launcher announced (OMPI_COMM_WORLD_SIZE, then PMI_SIZE), or 0 when the process was
// not started by one. A value that is not a positive integer counts as 0.
[[nodiscard]] int launcher_world_size();

// Whether this build has the MPI transport (defined where ZEPPELIN_HAVE_MPI is known).
[[nodiscard]] bool mpi_built();

}  // namespace zb::reference
