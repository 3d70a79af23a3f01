#pragma once
// Samples NIC byte counters (nic_counters.hpp) on a background thread while a measured run executes, and
// turns the samples into the Trace's link loads, the same LinkLoad series the simulator fills, marked
// measured. One sampler per node (the first rank of the node runs it): counters are per host.
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/exec/nic/nic_counters.hpp"
#include "core/exec/trace.hpp"

namespace zb::nic {

struct Sample {
  double t = 0;                  // seconds since the sampler's origin
  std::vector<ByteCounts> nics;  // one per NIC, in the sampler's order
};

class NicSampler {
 public:
  using Clock = std::chrono::steady_clock;
  // Reads every counter once at construction (so a bad NIC fails before the run), then samples every
  // `interval` from start() until stop(). Times are seconds since `origin`: the executor's own clock
  // origin, so the samples share the trace's time axis.
  NicSampler(std::vector<NicCounters> nics, std::chrono::microseconds interval, Clock::time_point origin);
  ~NicSampler();
  NicSampler(const NicSampler&) = delete;
  NicSampler& operator=(const NicSampler&) = delete;

  void start();
  // Takes a last sample and joins the thread; returns every sample, the first one taken at start().
  std::vector<Sample> stop();

  [[nodiscard]] const std::vector<NicCounters>& nics() const { return nics_; }

 private:
  Sample take() const;

  std::vector<NicCounters> nics_;
  std::chrono::microseconds interval_;
  Clock::time_point origin_;
  std::vector<Sample> samples_;
  std::jthread thread_;
};

// Two LinkLoads per NIC (tx then rx, NIC by NIC), named like the simulator's platform links
// ("n<node>-nic<i>-tx"), rate piecewise constant between samples, `bytes` the counter difference over
// the whole sampling, measured = true. `bandwidth` is the nominal rate (bytes/s) the scenario's preset
// gives the NIC. Fewer than two samples give zero loads.
[[nodiscard]] std::vector<LinkLoad> link_loads(const std::vector<Sample>& samples, int node,
                                               double bandwidth);

}  // namespace zb::nic
