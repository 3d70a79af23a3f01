#include "core/exec/cuda/activity_capture.hpp"

#include "core/common/error.hpp"
#ifdef ZEPPELIN_HAVE_CUPTI
#include "core/exec/cuda/cupti_activity.hpp"
#endif

namespace zb::cuda {

#ifdef ZEPPELIN_HAVE_CUPTI

ActivityCapture::ActivityCapture(bool wanted, int rank) : rank_(rank) {
  if (wanted) cupti_ = std::make_unique<CuptiActivity>(rank);
}

ActivityCapture::~ActivityCapture() = default;

void ActivityCapture::start() {
  if (!cupti_) return;
  try {
    cupti_->start();
  } catch (const Error& e) {
    note_ = std::string("no CUPTI activity trace: ") + e.what();
    cupti_.reset();
  }
}

void ActivityCapture::stop() {
  if (!cupti_) return;
  try {
    CollectedActivity collected = cupti_->stop();
    records_ = std::move(collected.records);
    clock_ = collected.clock;
    if (collected.dropped > 0)
      note_ = "CUPTI dropped " + std::to_string(collected.dropped) + " activity records on rank " +
              std::to_string(rank_);
    if (!collected.problem.empty())
      note_ +=
          (note_.empty() ? "" : "; ") + std::string("CUPTI activity partly unread: ") + collected.problem;
  } catch (const Error& e) {
    note_ = std::string("no CUPTI activity trace: ") + e.what();
  }
  cupti_.reset();
}

#else

// A build without CUPTI (cmake/Dependencies.cmake did not find CUDA::cupti) has no collector to run.
class CuptiActivity {};

ActivityCapture::ActivityCapture(bool wanted, int rank) : rank_(rank) {
  if (wanted) note_ = "no CUPTI activity trace: this build found no CUPTI (CUDA::cupti)";
}

ActivityCapture::~ActivityCapture() = default;

void ActivityCapture::start() {}
void ActivityCapture::stop() {}

#endif

void ActivityCapture::add_pass(Pass pass, const PassTimes& times, double offset, RankRecord& record) const {
  add_pass_activity(records_, clock_, rank_, pass, times, offset, record);
}

void ActivityCapture::add_notes(RankRecord& record) const {
  if (!note_.empty()) record.notes.push_back(note_);
}

}  // namespace zb::cuda
