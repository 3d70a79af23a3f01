#pragma once
// The MPI side of a reference run (built only with ZEPPELIN_HAVE_MPI): this process runs its own rank,
// then every rank sends its result to every other, so each process returns all ranks' results.
#include <memory>
#include <vector>

#include "core/exec/reference/rank_runner.hpp"

namespace zb::reference {

// The MPI world's size (initialises MPI on first use).
[[nodiscard]] int mpi_world_size();

// This process's MPI transport. The executor keeps ONE for all its runs: a fast rank may already send
// messages of the next run while this one finishes the last, and they must wait in the same mailbox.
[[nodiscard]] std::unique_ptr<Transport> make_mpi_transport();

// Runs this process's rank of the plan and gathers every rank's result. On failure it tells the other
// ranks (so they stop at once instead of timing out) and rethrows. On a timeout it does not return: it
// reports the wait and ends the whole job with MPI_Abort (mpi_abort.hpp).
[[nodiscard]] std::vector<RankResult> run_mpi_rank(Transport& transport, const RunInputs& inputs);

}  // namespace zb::reference
