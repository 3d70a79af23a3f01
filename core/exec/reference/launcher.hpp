#pragma once
// What the process launcher says about this process: how many processes mpirun (or a PMI launcher such
// as srun or MPICH's hydra) started. The reference executor uses it to pick the MPI transport and to
// refuse a world that does not match (a non-MPI build, or a binary linked against another MPI, started
// under a multi-rank launcher sees a world of one and would silently run every rank N times).
namespace zb::reference {

// The process count a launcher announced (OMPI_COMM_WORLD_SIZE, then PMI_SIZE), or 0 when the process was
// not started by one. A value that is not a positive integer counts as 0.
[[nodiscard]] int launcher_world_size();

// This process's rank as the launcher numbered it (OMPI_COMM_WORLD_RANK, then PMI_RANK), 0 when none.
// Under mpirun every process runs the whole command; only rank 0 prints and writes reports.
[[nodiscard]] int launcher_rank();

// Whether this build has the MPI transport (defined where ZEPPELIN_HAVE_MPI is known).
[[nodiscard]] bool mpi_built();

}  // namespace zb::reference
