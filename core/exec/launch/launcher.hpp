#pragma once
// What the process launcher says about this process: which launcher started it, its rank and the world
// size, and its place on its node (local rank and local size, which choose the GPU). Read once from the
// environment the launchers set:
//   Open MPI's mpirun / prterun   OMPI_COMM_WORLD_{RANK,SIZE,LOCAL_RANK,LOCAL_SIZE}
//   Slurm's srun                  SLURM_PROCID, SLURM_STEP_NUM_TASKS, SLURM_LOCALID, SLURM_NODEID,
//                                 SLURM_STEP_TASKS_PER_NODE ("4(x2),3": tasks per node, node by node)
//   PMIx launchers                PMIX_RANK with PMIX_SIZE (or the Slurm or Open MPI world size)
//   MPICH's hydra and other PMI   PMI_RANK, PMI_SIZE, MPI_LOCALRANKID, MPI_LOCALNRANKS
// in that order of precedence. Slurm counts only inside a job step: an sbatch script's own shell has
// SLURM_PROCID=0 and SLURM_NTASKS of the whole allocation, and a binary run there directly is one
// process, not a world of SLURM_NTASKS (so SLURM_NTASKS is never read).
//
// The executors use it to pick the multi-process path (reference: the MPI transport; cuda: NCCL over
// MPI) and to refuse a world that does not match the scenario: a binary started under a multi-rank
// launcher that it cannot join would otherwise run every rank N times.
#include <functional>
#include <string>

namespace zb {

struct Launch {
  std::string launcher = "none";  // "mpirun (Open MPI)", "srun (Slurm)", "PMIx", "PMI", or "none"
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;  // rank among this node's processes (chooses the GPU)
  int local_size = 1;  // processes on this node
  [[nodiscard]] bool multi_process() const { return launcher != "none"; }
};

// Looks a variable up: nullptr when it is not set. std::getenv in production, a table in tests.
using EnvLookup = std::function<const char*(const char*)>;

// The launch the variables describe. zb::Error (exit 2) naming the variable and its value when one is
// set but is not a non-negative integer, or when they contradict each other (a rank outside the world,
// a local rank outside the node's count): a half-configured launcher is refused, not guessed at.
[[nodiscard]] Launch detect_launch(const EnvLookup& env);

// detect_launch(std::getenv): read at each call (a handful of getenv), so that what a caller sees is
// the environment as it is, tests that set a launcher's variables included.
[[nodiscard]] Launch process_launch();

// "rank 3 of 16 (local 3 of 8) under srun (Slurm)", or "a single process (no launcher)": for messages.
[[nodiscard]] std::string describe(const Launch& launch);

}  // namespace zb
