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

std::atomic<CuptiActivity*> CuptiActivity::active_{nullptr};

CuptiActivity::CuptiActivity(int rank) : rank_(rank) {}

CuptiActivity::~CuptiActivity() {
  if (!running_) return;
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  disable_kinds();
  active_.store(nullptr);
}

void CUPTIAPI CuptiActivity::buffer_requested(std::uint8_t** buffer, std::size_t* size,
                                              std::size_t* max_records) {
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(kRecordAlignment, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;  // none: CUPTI drops records and counts them
  *max_records = 0;                               // as many as fit
}

void CUPTIAPI CuptiActivity::buffer_completed(CUcontext context, std::uint32_t stream, std::uint8_t* buffer,
                                              std::size_t /*size*/, std::size_t valid_bytes) {
  if (CuptiActivity* collector = active_.load(); collector != nullptr)
    collector->take_buffer(context, stream, buffer, valid_bytes);
  std::free(buffer);
}

void CuptiActivity::take_buffer(CUcontext context, std::uint32_t stream, std::uint8_t* buffer,
                                std::size_t valid_bytes) {
  ParsedActivity parsed = parse_activity_buffer(buffer, valid_bytes);
  std::size_t dropped = 0;
  const CUptiResult dropped_status = cuptiActivityGetNumDroppedRecords(context, stream, &dropped);
  const std::lock_guard lock(mutex_);
  records_.insert(records_.end(), std::make_move_iterator(parsed.records.begin()),
                  std::make_move_iterator(parsed.records.end()));
  if (dropped_status == CUPTI_SUCCESS) dropped_ += dropped;
  if (!parsed.stopped.empty() && problem_.empty()) problem_ = parsed.stopped;
}

void CuptiActivity::disable_kinds() {
  for (const CUpti_ActivityKind kind : kKinds) cuptiActivityDisable(kind);
}

void CuptiActivity::start() {
  CuptiActivity* none = nullptr;
  if (!active_.compare_exchange_strong(none, this))
    fail(rank_, "backend cuda: a CUPTI activity trace is already being collected in this process (a bug)");
  try {
    check_cupti(
        cuptiActivityRegisterCallbacks(&CuptiActivity::buffer_requested, &CuptiActivity::buffer_completed),
        rank_, "cuptiActivityRegisterCallbacks");
    for (const CUpti_ActivityKind kind : kKinds)
      check_cupti(cuptiActivityEnable(kind), rank_, "cuptiActivityEnable");
    first_ = read_clocks(rank_);
  } catch (...) {
    disable_kinds();
    active_.store(nullptr);
    throw;
  }
  running_ = true;
}

CollectedActivity CuptiActivity::stop() {
  check_cuda(cudaDeviceSynchronize(), rank_, "cudaDeviceSynchronize", "backend cuda: ending the CUPTI trace");
  check_cupti(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), rank_, "cuptiActivityFlushAll");
  const ClockPair last = read_clocks(rank_);
  disable_kinds();
  active_.store(nullptr);
  running_ = false;
  const std::lock_guard lock(mutex_);
  CollectedActivity collected;
  collected.records = std::move(records_);
  collected.clock = ClockMap(first_, last);
  collected.dropped = dropped_;
  collected.problem = problem_;
  records_.clear();
  dropped_ = 0;
  problem_.clear();
  return collected;
}

}  // namespace zb::cuda
