#include "core/exec/cuda/pass_runner.hpp"

#include <algorithm>

#include "core/exec/cuda/cuda_check.hpp"
#include "core/exec/cuda/cupti_records.hpp"
#ifdef ZEPPELIN_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

namespace zb::cuda {

namespace {

// An NVTX range on the host thread while an item is enqueued (Nsight Systems links it to the kernels
// and NCCL calls it launches).
class NvtxRange {
 public:
  explicit NvtxRange([[maybe_unused]] const std::string& name) {
#ifdef ZEPPELIN_HAVE_NVTX
    nvtxRangePushA(name.c_str());
#endif
  }
  ~NvtxRange() {
#ifdef ZEPPELIN_HAVE_NVTX
    nvtxRangePop();
#endif
  }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

}  // namespace

PassRunner::PassRunner(const lower::Program& program, const GlobalOrder& order, int rank,
                       const ComputeLauncher& compute, const RankComm& comm, ncclComm_t world)
    : program_(program),
      items_(order.issue.at(static_cast<std::size_t>(rank))),
      first_backward_(static_cast<std::size_t>(order.first_backward_item.at(static_cast<std::size_t>(rank)))),
      rank_(rank),
      compute_(compute),
      comm_(comm),
      world_(world) {
  const std::string setup = "backend cuda: setting up rank " + std::to_string(rank) + "'s streams and events";
  // The comm stream gets the device's highest priority, the compute stream its lowest (the default). NCCL's
  // kernels each hold a few SMs and spin until their peer's data arrives; at equal priority the block
  // scheduler can fill every SM with a long attention or GEMM kernel first, so a transfer another rank
  // waits on starts only when that kernel drains, and the ring stalls. With priority, the NCCL kernel's
  // blocks are scheduled as soon as SMs free up, ahead of the compute kernel's remaining blocks (priority
  // orders pending blocks; it does not preempt running ones).
  int least_priority = 0, greatest_priority = 0;
  check_cuda(cudaDeviceGetStreamPriorityRange(&least_priority, &greatest_priority), rank,
             "cudaDeviceGetStreamPriorityRange", setup);
  check_cuda(cudaStreamCreateWithPriority(&compute_stream_, cudaStreamNonBlocking, least_priority), rank,
             "cudaStreamCreateWithPriority (compute stream)", setup);
  check_cuda(cudaStreamCreateWithPriority(&comm_stream_, cudaStreamNonBlocking, greatest_priority), rank,
             "cudaStreamCreateWithPriority (comm stream)", setup);
  for (cudaEvent_t* e : {&pass_start_, &comm_done_, &pass_end_})
    check_cuda(cudaEventCreate(e), rank, "cudaEventCreate", setup);
  start_.assign(items_.size(), nullptr);
  end_.assign(items_.size(), nullptr);
  for (std::size_t k = 0; k < items_.size(); ++k) {
    check_cuda(cudaEventCreate(&start_[k]), rank, "cudaEventCreate", setup);
    check_cuda(cudaEventCreate(&end_[k]), rank, "cudaEventCreate", setup);
  }
  check_cuda(cudaMalloc(reinterpret_cast<void**>(&barrier_word_), sizeof(int)), rank, "cudaMalloc", setup);
  check_cuda(cudaMemset(barrier_word_, 0, sizeof(int)), rank, "cudaMemset", setup);
  // Which item completes each instruction, then what each item waits for on the other stream.
  std::vector<int> item_of(program.ranks.at(static_cast<std::size_t>(rank)).instrs.size(), -1);
  for (std::size_t k = 0; k < items_.size(); ++k) {
    if (items_[k].compute) item_of[static_cast<std::size_t>(items_[k].instr)] = static_cast<int>(k);
    for (const NcclCall& c : items_[k].calls)
      item_of[static_cast<std::size_t>(c.instr)] = static_cast<int>(k);
  }
  waits_.resize(items_.size());
  for (std::size_t k = 0; k < items_.size(); ++k) {
    std::vector<int> ids;
    if (items_[k].compute) ids.push_back(items_[k].instr);
    for (const NcclCall& c : items_[k].calls) ids.push_back(c.instr);
    for (const int id : ids) {
      for (const int d : resolved_deps(program, rank, id)) {
        const int from = item_of[static_cast<std::size_t>(d)];
        if (from < 0 || items_[static_cast<std::size_t>(from)].compute == items_[k].compute)
          continue;  // same stream
        if (program.instr(rank, d).pass != program.instr(rank, id).pass)
          continue;  // the barrier orders the passes
        waits_[k].push_back(from);
      }
    }
    std::sort(waits_[k].begin(), waits_[k].end());
    waits_[k].erase(std::unique(waits_[k].begin(), waits_[k].end()), waits_[k].end());
  }
}

PassRunner::~PassRunner() {
  for (cudaEvent_t e : start_) cudaEventDestroy(e);
  for (cudaEvent_t e : end_) cudaEventDestroy(e);
  for (cudaEvent_t e : {pass_start_, comm_done_, pass_end_})
    if (e != nullptr) cudaEventDestroy(e);
  if (compute_stream_ != nullptr) cudaStreamDestroy(compute_stream_);
  if (comm_stream_ != nullptr) cudaStreamDestroy(comm_stream_);
  if (barrier_word_ != nullptr) cudaFree(barrier_word_);
}

std::size_t PassRunner::first_item(Pass pass) const {
  return pass == Pass::fwd ? 0 : first_backward_;
}
std::size_t PassRunner::end_item(Pass pass) const {
  return pass == Pass::fwd ? first_backward_ : items_.size();
}

void PassRunner::barrier() {
  const std::string context = "backend cuda: the barrier between passes";
  check_cuda(cudaDeviceSynchronize(), rank_, "cudaDeviceSynchronize", context);
  check_nccl(ncclAllReduce(barrier_word_, barrier_word_, 1, ncclInt32, ncclSum, world_, comm_stream_), rank_,
             "ncclAllReduce", context);
  check_cuda(cudaStreamSynchronize(comm_stream_), rank_, "cudaStreamSynchronize", context);
}

void PassRunner::enqueue(std::size_t k) {
  const IssueItem& item = items_[k];
  cudaStream_t stream = item.compute ? compute_stream_ : comm_stream_;
  const int first_instr = item.compute ? item.instr : item.calls.front().instr;
  const std::string context = "backend cuda: " + lower::describe(program_, rank_, first_instr);
  NvtxRange range(program_.instr(rank_, first_instr).name);
  for (const int from : waits_[k])
    check_cuda(cudaStreamWaitEvent(stream, end_[static_cast<std::size_t>(from)], 0), rank_,
               "cudaStreamWaitEvent", context);
  check_cuda(cudaEventRecord(start_[k], stream), rank_, "cudaEventRecord", context);
  if (item.compute)
    compute_.launch(item.instr, stream);
  else
    comm_.issue(item, stream);
  check_cuda(cudaEventRecord(end_[k], stream), rank_, "cudaEventRecord", context);
}

PassTimes PassRunner::run(Pass pass) {
  const std::string context =
      std::string("backend cuda: rank ") + std::to_string(rank_) + "'s " + to_string(pass) + " pass";
  PassTimes t;
  // The pass's device span starts at pass_start_, recorded BEFORE the host enqueues the pass, so the device
  // starts on the first items while the host is still enqueueing the rest. Starting the span only once the
  // host has enqueued everything would need the device held back meanwhile (a gate the host opens), and a
  // held-back device cannot drain CUDA's launch queue: a pass of more launches than the queue holds would
  // block the host in cudaLaunchKernel, which then never opens the gate. So the span stays device-honest
  // (what the pass takes on this GPU as launched), and the host's enqueue time is measured beside it
  // (enqueue_seconds): where it comes close to the span, the pass is bound by the host's launches and the
  // note says so (cuda_executor.cpp).
  t.host_start_ns = host_clock_ns();  // the device is idle (the barrier): it runs pass_start_ at once
  check_cuda(cudaEventRecord(pass_start_, compute_stream_), rank_, "cudaEventRecord", context);
  check_cuda(cudaStreamWaitEvent(comm_stream_, pass_start_, 0), rank_, "cudaStreamWaitEvent", context);
  const std::size_t begin = first_item(pass), end = end_item(pass);
  for (std::size_t k = begin; k < end; ++k) enqueue(k);
  check_cuda(cudaEventRecord(comm_done_, comm_stream_), rank_, "cudaEventRecord", context);
  check_cuda(cudaStreamWaitEvent(compute_stream_, comm_done_, 0), rank_, "cudaStreamWaitEvent", context);
  check_cuda(cudaEventRecord(pass_end_, compute_stream_), rank_, "cudaEventRecord", context);
  t.enqueue_seconds = static_cast<double>(host_clock_ns() - t.host_start_ns) * 1e-9;
  check_cuda(cudaEventSynchronize(pass_end_), rank_, "cudaEventSynchronize", context);
  t.host_end_ns = host_clock_ns();
  float ms = 0;
  check_cuda(cudaEventElapsedTime(&ms, pass_start_, pass_end_), rank_, "cudaEventElapsedTime", context);
  t.seconds = ms * 1e-3;
  for (std::size_t k = begin; k < end; ++k) {
    float a = 0, b = 0;
    check_cuda(cudaEventElapsedTime(&a, pass_start_, start_[k]), rank_, "cudaEventElapsedTime", context);
    check_cuda(cudaEventElapsedTime(&b, pass_start_, end_[k]), rank_, "cudaEventElapsedTime", context);
    t.start.push_back(a * 1e-3);
    t.end.push_back(b * 1e-3);
  }
  return t;
}

}  // namespace zb::cuda
