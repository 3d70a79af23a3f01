#include "core/exec/cuda/cupti_activity.hpp"

#include <cuda_runtime_api.h>

#include <cstdlib>

#include "core/exec/cuda/cuda_check.hpp"
#include "core/exec/cuda/cupti_buffer.hpp"

namespace zb::cuda {
namespace {

// Big enough that a pass of a few thousand kernels fills a handful; CUPTI asks for another when one is full.
constexpr std::size_t kBufferBytes = 8u << 20;
constexpr std::size_t kRecordAlignment = 8;  // CUPTI's alignment of activity records
const CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                     CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET};

std::string cupti_error(CUptiResult code) {
  const char* text = nullptr;
  cuptiGetResultString(code, &text);
  return text != nullptr ? text : "CUPTI error " + std::to_string(static_cast<int>(code));
}

void check_cupti(CUptiResult code, int rank, const char* call) {
  if (code == CUPTI_SUCCESS) return;
  fail(rank, std::string("backend cuda: CUPTI activity trace: ") + call + " failed: " + cupti_error(code),
       "another profiler (Nsight Systems, a PyTorch profiler) may hold CUPTI; run without it or set "
       "ZB_CUDA_CUPTI=off");
}

// Both clocks at one moment: CUPTI's between two host readings, paired with their midpoint.
ClockPair read_clocks(int rank) {
  const std::int64_t before = host_clock_ns();
  std::uint64_t cupti = 0;
  check_cupti(cuptiGetTimestamp(&cupti), rank, "cuptiGetTimestamp");
  const std::int64_t after = host_clock_ns();
  return {cupti, before + (after - before) / 2};
}

}  // namespace

std::mutex CuptiActivity::store_mutex_;
CuptiActivity* CuptiActivity::active_ = nullptr;

CuptiActivity::CuptiActivity(int rank) : rank_(rank) {}

// Stopping without keeping anything (an error path, or stop() failed part-way): flush, then stop, as
// stop() does, but nothing thrown from a destructor; what CUPTI still delivers is dropped.
CuptiActivity::~CuptiActivity() {
  if (!running_) return;
  (void)cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  (void)disable_kinds();
  detach();
}

void CUPTIAPI CuptiActivity::buffer_requested(std::uint8_t** buffer, std::size_t* size,
                                              std::size_t* max_records) {
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(kRecordAlignment, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;  // none: CUPTI drops records and counts them
  *max_records = 0;                               // as many as fit
}

void CUPTIAPI CuptiActivity::buffer_completed(CUcontext context, std::uint32_t stream, std::uint8_t* buffer,
                                              std::size_t /*size*/, std::size_t valid_bytes) {
  // The walk reads only the buffer, so it runs before the lock; the store is touched only under it, and
  // only while a collector is attached.
  ParsedActivity parsed = parse_activity_buffer(buffer, valid_bytes);
  std::size_t dropped = 0;
  const CUptiResult dropped_status = cuptiActivityGetNumDroppedRecords(context, stream, &dropped);
  {
    const std::lock_guard lock(store_mutex_);
    if (CuptiActivity* collector = active_; collector != nullptr) {
      collector->records_.insert(collector->records_.end(), std::make_move_iterator(parsed.records.begin()),
                                 std::make_move_iterator(parsed.records.end()));
      if (dropped_status == CUPTI_SUCCESS) collector->dropped_ += dropped;
      if (!parsed.stopped.empty() && collector->problem_.empty()) collector->problem_ = parsed.stopped;
    }
  }
  std::free(buffer);
}

void CuptiActivity::detach() {
  const std::lock_guard lock(store_mutex_);
  if (active_ == this) active_ = nullptr;
  running_ = false;
}

std::string CuptiActivity::disable_kinds() {
  std::string problem;
  for (const CUpti_ActivityKind kind : kKinds) {
    if (const CUptiResult code = cuptiActivityDisable(kind); code != CUPTI_SUCCESS && problem.empty())
      problem = "cuptiActivityDisable failed: " + cupti_error(code);
  }
  return problem;
}

void CuptiActivity::start() {
  {
    const std::lock_guard lock(store_mutex_);
    if (active_ != nullptr)
      fail(rank_, "backend cuda: a CUPTI activity trace is already being collected in this process (a bug)");
    active_ = this;
    records_.clear();
    dropped_ = 0;
    problem_.clear();
  }
  try {
    check_cupti(
        cuptiActivityRegisterCallbacks(&CuptiActivity::buffer_requested, &CuptiActivity::buffer_completed),
        rank_, "cuptiActivityRegisterCallbacks");
    for (const CUpti_ActivityKind kind : kKinds)
      check_cupti(cuptiActivityEnable(kind), rank_, "cuptiActivityEnable");
    first_ = read_clocks(rank_);
  } catch (...) {
    (void)disable_kinds();
    detach();
    throw;
  }
  running_ = true;
}

CollectedActivity CuptiActivity::stop() {
  // Flush, then stop: the device idle first, so that every record of the timed layers is complete; then
  // every buffer back through the callback (incomplete ones too); only then the kinds disabled and the
  // collector detached. A failure leaves running_ set, so the destructor still stops CUPTI.
  check_cuda(cudaDeviceSynchronize(), rank_, "cudaDeviceSynchronize", "backend cuda: ending the CUPTI trace");
  check_cupti(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), rank_, "cuptiActivityFlushAll");
  const ClockPair last = read_clocks(rank_);
  const std::string disable_problem = disable_kinds();
  detach();  // from here on no callback touches the store: it is this thread's alone
  CollectedActivity collected;
  collected.records = std::move(records_);
  collected.clock = ClockMap(first_, last);
  collected.dropped = dropped_;
  collected.problem = problem_;
  if (!disable_problem.empty())
    collected.problem += (collected.problem.empty() ? "" : "; ") + disable_problem;
  records_.clear();
  dropped_ = 0;
  problem_.clear();
  return collected;
}

}  // namespace zb::cuda
