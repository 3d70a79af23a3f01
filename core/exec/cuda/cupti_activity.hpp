#pragma once
// CUPTI's activity trace of this process's GPU while the cuda executor's timed repetitions run: every
// kernel (concurrent kernel records, so kernels keep overlapping as they would without CUPTI; NCCL's
// marked by name), memory copy and memset, with its CUDA stream, as plain records (cupti_records.hpp).
// Built only with CUDA and CUPTI (ZEPPELIN_HAVE_CUPTI); the executor says in the trace's note when a
// build has no CUPTI.
//
// The one static in this file: CUPTI hands buffers over through two plain function pointers that carry
// no user data, so while a collector runs, a static pointer (`active_`) names it and the two static
// callbacks forward to it; every piece of state lives in the object. CUPTI's activity API serves one
// client per process, so a second collector started while one runs is refused (exit 3).
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include <cupti.h>

#include "core/exec/cuda/cupti_records.hpp"

namespace zb::cuda {

struct CollectedActivity {
  std::vector<CuptiRecord> records;
  ClockMap clock;             // CUPTI's clock onto host_clock_ns, through the start and stop readings
  std::uint64_t dropped = 0;  // records CUPTI dropped (buffers it could not get in time)
  std::string problem;        // why some records are missing or unreadable; empty when none are
};

class CuptiActivity {
 public:
  explicit CuptiActivity(int rank);
  ~CuptiActivity();  // stops a collection still running, keeping nothing
  CuptiActivity(const CuptiActivity&) = delete;
  CuptiActivity& operator=(const CuptiActivity&) = delete;

  // Registers the buffer callbacks, enables the activity kinds and reads both clocks. Exit 3 naming the
  // CUPTI call when one fails (another profiler holding CUPTI, a driver without CUPTI support).
  void start();
  // Waits for the device, flushes every buffer (incomplete ones too), disables the kinds, reads both
  // clocks again and returns what was recorded since start().
  [[nodiscard]] CollectedActivity stop();

 private:
  static void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records);
  static void CUPTIAPI buffer_completed(CUcontext context, std::uint32_t stream, std::uint8_t* buffer,
                                        std::size_t size, std::size_t valid_bytes);
  void take_buffer(CUcontext context, std::uint32_t stream, std::uint8_t* buffer, std::size_t valid_bytes);
  void disable_kinds();

  static std::atomic<CuptiActivity*> active_;  // the running collector, for the two callbacks

  int rank_;
  bool running_ = false;
  ClockPair first_;
  std::mutex mutex_;  // the callbacks run on CUPTI's own thread
  std::vector<CuptiRecord> records_;
  std::uint64_t dropped_ = 0;
  std::string problem_;
};

}  // namespace zb::cuda
