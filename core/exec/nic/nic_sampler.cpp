#include "core/exec/nic/nic_sampler.hpp"

#include <utility>

namespace zb::nic {

NicSampler::NicSampler(std::vector<NicCounters> nics, std::chrono::microseconds interval,
                       Clock::time_point origin)
    : nics_(std::move(nics)), interval_(interval), origin_(origin) {
  (void)take();
}

NicSampler::~NicSampler() {
  if (thread_.joinable()) {
    thread_.request_stop();
    thread_.join();
  }
}

Sample NicSampler::take() const {
  Sample s;
  s.nics.reserve(nics_.size());
  for (const NicCounters& nic : nics_) s.nics.push_back(read_counters(nic));
  s.t = std::chrono::duration<double>(Clock::now() - origin_).count();
  return s;
}

void NicSampler::start() {
  samples_.clear();
  samples_.push_back(take());
  // The thread owns samples_ until stop() joins it; sleep_until keeps the period from drifting by the
  // time the reads take.
  thread_ = std::jthread([this](std::stop_token stop) {
    auto next = Clock::now() + interval_;
    while (!stop.stop_requested()) {
      std::this_thread::sleep_until(next);
      next += interval_;
      samples_.push_back(take());
    }
  });
}

std::vector<Sample> NicSampler::stop() {
  if (thread_.joinable()) {
    thread_.request_stop();
    thread_.join();
  }
  samples_.push_back(take());
  return std::move(samples_);
}

std::vector<LinkLoad> link_loads(const std::vector<Sample>& samples, int node, double bandwidth) {
  std::vector<LinkLoad> loads;
  if (samples.empty()) return loads;
  const std::size_t count = samples.front().nics.size();
  for (std::size_t k = 0; k < count; ++k) {
    for (const bool tx : {true, false}) {
      LinkLoad load;
      load.name = "n" + std::to_string(node) + "-nic" + std::to_string(k) + (tx ? "-tx" : "-rx");
      load.kind = tx ? LinkKind::nic_tx : LinkKind::nic_rx;
      load.node = node;
      load.index = static_cast<int>(k);
      load.bandwidth = bandwidth;
      load.measured = true;
      const auto value = [&](const Sample& s) {
        return static_cast<double>(tx ? s.nics[k].tx : s.nics[k].rx);
      };
      for (std::size_t i = 0; i + 1 < samples.size(); ++i) {
        const double dt = samples[i + 1].t - samples[i].t;
        const double moved = value(samples[i + 1]) - value(samples[i]);
        if (!(dt > 0)) continue;
        const double rate = moved / dt;
        // Merge equal neighbours so an idle NIC is one point, not thousands.
        if (load.series.empty() || load.series.back().bytes_per_second != rate)
          load.series.push_back({samples[i].t, rate});
        if (moved > 0) load.busy_seconds += dt;
      }
      load.series.push_back({samples.back().t, 0.0});
      load.bytes = value(samples.back()) - value(samples.front());
      loads.push_back(std::move(load));
    }
  }
  return loads;
}

}  // namespace zb::nic
