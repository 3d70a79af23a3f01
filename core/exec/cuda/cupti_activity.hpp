#pragma once
// CUPTI's activity trace of this process's GPU while the cuda executor's timed repetitions run: every
// kernel (concurrent kernel records, so kernels keep overlapping as they would without CUPTI; NCCL's
// marked by name), memory copy and memset, with its CUDA stream, as plain records (cupti_records.hpp).
// Built only with CUDA and CUPTI (ZEPPELIN_HAVE_CUPTI); the executor says in the trace's note when a
// build has no CUPTI.
//
// The statics in this file: CUPTI hands buffers over through two plain function pointers that carry no
// user data, so while a collector runs, a static pointer (`active_`) names it and the buffer-completed
// callback forwards to it; every piece of state lives in the object. CUPTI's activity API serves one
// client per process, so a second collector started while one runs is refused (exit 3).
//
// The callback runs on CUPTI's own thread, at any time, including while stop() or the destructor runs.
// One static mutex (`store_mutex_`) guards `active_` and the record store together: the callback hands
// its records over while holding it, and stop() and the destructor clear `active_` while holding it, so
// the two never touch the store at once and no callback uses a collector after it has stopped (or been
// destroyed). The order in both is flush, then stop: every buffer CUPTI holds, incomplete ones too,
// comes back (cuptiActivityFlushAll with CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) before the kinds are disabled
// and the collector is detached.
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
  // Detaches the collector from the callback: after it returns, no callback touches this object.
  void detach();
  // Returns CUPTI's message when a call fails (disabling is best effort: every kind is tried).
  std::string disable_kinds();

  static std::mutex store_mutex_;  // guards active_ and the running collector's store (below)
  static CuptiActivity* active_;   // the running collector, for the buffer-completed callback

  int rank_;
  bool running_ = false;
  ClockPair first_;
  // The record store, written by the callback under store_mutex_.
  std::vector<CuptiRecord> records_;
  std::uint64_t dropped_ = 0;
  std::string problem_;
};

}  // namespace zb::cuda
