#pragma once
// CUPTI's activity trace around the cuda executor's timed repetitions, as the executor uses it: started
// before the first timed layer and stopped after the last, then the records of each pass's median
// repetition (its host window) go into the rank's record. A profiler that cannot run is no reason to
// lose the measurement: when CUPTI cannot start or stop (another profiler holds it), or the build has no
// CUPTI, the rank's record says why in a note and the run goes on without device activity.
#include <memory>
#include <string>
#include <vector>

#include "core/exec/cuda/cupti_records.hpp"
#include "core/exec/cuda/trace_codec.hpp"
#include "core/exec/cuda/trace_events.hpp"

namespace zb::cuda {

class CuptiActivity;

class ActivityCapture {
 public:
  // `wanted`: ZB_CUDA_CUPTI. Nothing is collected, and nothing said, when it is off.
  ActivityCapture(bool wanted, int rank);
  ~ActivityCapture();
  ActivityCapture(const ActivityCapture&) = delete;
  ActivityCapture& operator=(const ActivityCapture&) = delete;

  void start();
  void stop();
  // The records that started inside `times`' host window, as `pass`'s activity `offset` seconds later on
  // the trace axis.
  void add_pass(Pass pass, const PassTimes& times, double offset, RankRecord& record) const;
  // What the trace's note should say about the collection (records dropped, CUPTI unavailable).
  void add_notes(RankRecord& record) const;

 private:
  int rank_;
  std::unique_ptr<CuptiActivity> cupti_;  // null when not wanted, not built, or failed to start
  std::vector<CuptiRecord> records_;
  ClockMap clock_;
  std::string note_;
};

}  // namespace zb::cuda
