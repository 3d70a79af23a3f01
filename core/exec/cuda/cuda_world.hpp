#pragma once
// The process's place in a cuda run: its GPU (local rank of the launch, core/exec/launch), the MPI world
// when there is more than one process (for the NCCL bootstrap and the reductions of the measurements)
// and the NCCL communicators: one over the world, one per distinct member set of the collectives and
// the rank's rail for the routed legs between nodes (ncclCommSplit, made in the same order on every rank
// because every rank sees the same programs).
// Created once per process on the first run and kept: NCCL and MPI initialise once. Ended by shutdown(),
// which the run command calls before main returns (core/exec's shut_down_backends), never by a static
// destructor after main: by then the CUDA runtime NCCL needs may already be torn down.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nccl.h>

#include "core/common/error.hpp"

namespace zb::cuda {

// Exit 3 with "backend cuda: no usable CUDA device (cudaGetDeviceCount: …); use --backend sim" when the
// driver or a device is missing; otherwise the number of visible devices.
int usable_device_count();

class CudaWorld {
 public:
  // The world for a program of `program_world_size` ranks. Exit 2 when the launch's world size differs
  // from it (naming both) or when more processes share this node than it has GPUs; exit 3 when the
  // device, MPI or NCCL cannot be set up.
  // Exit 3 after shutdown(): NCCL's bootstrap and MPI cannot start twice in one process.
  static CudaWorld& get(int program_world_size);
  // Ends this process's world, if there is one: every communicator (the collectives' and rails' before the
  // world one they were split from, in the same order on every rank) and MPI when it was initialised here.
  // On success `after_failure` is false: ncclCommDestroy (which completes what was enqueued; an intra-node
  // collective that every rank reaches, since every rank ends its run the same way) and MPI_Finalize. On an
  // error path it is true and nothing may wait for the peers, one of which may be stuck in NCCL waiting
  // for this rank: ncclCommAbort, and for a world of several processes no MPI_Finalize (Open MPI's waits
  // for every process), so this process exits with its error and the launcher ends the others.
  // Idempotent; every failed call is returned as a message naming it (never thrown).
  static std::vector<std::string> shutdown(bool after_failure);
  ~CudaWorld();  // a no-op after shutdown(); otherwise (a command that never called it) as shutdown(false)
  CudaWorld(const CudaWorld&) = delete;
  CudaWorld& operator=(const CudaWorld&) = delete;

  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] int size() const { return size_; }
  [[nodiscard]] int device() const { return device_; }
  [[nodiscard]] const std::string& gpu_name() const { return gpu_name_; }
  [[nodiscard]] ncclComm_t world() const { return world_; }
  // The communicator over `members` (in their order: member i is its rank i), made on first use. Every
  // rank of the world must call it with the same member sets in the same order; non-members get nullptr.
  ncclComm_t group(const std::vector<int>& members);
  // This rank's rail: the communicator of the ranks with its local rank (rank % gpus_per_node) on every
  // node, numbered by node (ncclCommSplit(world, color = local rank, key = node)), made on first use.
  // Every rank of the world must call it at the same point (the split is collective).
  ncclComm_t rail(int gpus_per_node);

  // Every rank learns whether every other one got through a step (setup, the correctness pass): a rank
  // that failed alone would leave the others waiting in their next NCCL call forever. The failing rank
  // rethrows its own error; the others report that a peer failed `during` it, with its exit code.
  void agree(const std::optional<Error>& failure, const std::string& during) const;
  // Element-wise max over ranks (identity for one process).
  [[nodiscard]] std::vector<double> max_over_ranks(std::vector<double> values) const;
  // Every rank's bytes, in rank order (only this rank's for one process).
  [[nodiscard]] std::vector<std::vector<char>> all_gather(const std::vector<char>& mine) const;

 private:
  CudaWorld(int rank, int size, int device);
  std::vector<std::string> end(bool after_failure);
  int rank_ = 0, size_ = 1, device_ = 0;
  bool mpi_initialised_here_ = false;
  std::string gpu_name_;
  ncclComm_t world_ = nullptr;
  std::map<std::vector<int>, ncclComm_t> groups_;
  std::map<int, ncclComm_t> rails_;  // gpus_per_node → this rank's rail
};

}  // namespace zb::cuda
