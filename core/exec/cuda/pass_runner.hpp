#pragma once
// Enqueues one pass of one rank's program on two streams and times it with CUDA events. The host walks
// the rank's issue list of the global order (nccl_order.hpp): a compute item goes on the compute
// stream, a comm step on the comm stream, and every cross-stream dependency is one cudaEvent recorded
// by the earlier item and waited on with cudaStreamWaitEvent: the host never synchronises inside a
// pass. Each item records a start and an end event, so after the pass (one cudaStreamSynchronize) its
// times relative to the pass start are known; NVTX ranges name every instruction for Nsight Systems.
// The comm stream has the device's highest stream priority, the compute stream its lowest. A pass's time
// is the device span from an event recorded before the host enqueues it to the end of both streams; the
// host's enqueue time is measured beside it (PassTimes::enqueue_seconds).
#include <vector>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "core/exec/cuda/nccl_order.hpp"
#include "core/exec/cuda/rank_comm.hpp"
#include "core/exec/cuda/rank_compute.hpp"
#include "core/exec/cuda/trace_events.hpp"
#include "core/lower/program.hpp"

namespace zb::cuda {

class PassRunner {
 public:
  PassRunner(const lower::Program& program, const GlobalOrder& order, int rank,
             const ComputeLauncher& compute, const RankComm& comm, ncclComm_t world);
  ~PassRunner();
  PassRunner(const PassRunner&) = delete;
  PassRunner& operator=(const PassRunner&) = delete;

  // A world barrier: every rank's device is idle and every rank has reached it (an ncclAllReduce of
  // one int, then a stream synchronisation), so the passes of all ranks start together.
  void barrier();
  // Enqueues `pass`, waits for it and reads its events.
  PassTimes run(Pass pass);

  [[nodiscard]] std::size_t first_item(Pass pass) const;  // index into the rank's issue list
  [[nodiscard]] std::size_t end_item(Pass pass) const;

 private:
  void enqueue(std::size_t item);

  const lower::Program& program_;
  const std::vector<IssueItem>& items_;
  std::size_t first_backward_;
  int rank_;
  const ComputeLauncher& compute_;
  const RankComm& comm_;
  ncclComm_t world_;
  cudaStream_t compute_stream_ = nullptr, comm_stream_ = nullptr;
  cudaEvent_t pass_start_ = nullptr, comm_done_ = nullptr, pass_end_ = nullptr;
  std::vector<cudaEvent_t> start_, end_;  // [item]
  std::vector<std::vector<int>> waits_;   // [item] → items of the other stream it waits for
  int* barrier_word_ = nullptr;           // one int on the device for the barrier's all-reduce
};

}  // namespace zb::cuda
