#include "core/exec/cuda/cupti_records.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>

namespace zb::cuda {

std::int64_t host_clock_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string readable_kernel_name(const char* name) {
  if (name == nullptr) return "(unnamed kernel)";
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> demangled(
      abi::__cxa_demangle(name, nullptr, nullptr, &status), &std::free);
  return status == 0 && demangled ? std::string(demangled.get()) : std::string(name);
}

bool is_nccl_kernel(std::string_view readable_name) {
  return readable_name.starts_with("ncclDevKernel") || readable_name.starts_with("ncclKernel");
}

ClockMap::ClockMap(ClockPair first, ClockPair last) : first_(first) {
  if (last.cupti_ns != first.cupti_ns)
    slope_ = static_cast<double>(last.host_ns - first.host_ns) /
             (static_cast<double>(last.cupti_ns) - static_cast<double>(first.cupti_ns));
}

double ClockMap::host_ns(std::uint64_t cupti_ns) const {
  // Differences first: the clocks' absolute values are large enough to lose nanoseconds in a double.
  const double since = static_cast<double>(static_cast<std::int64_t>(cupti_ns - first_.cupti_ns));
  return static_cast<double>(first_.host_ns) + since * slope_;
}

void add_pass_activity(const std::vector<CuptiRecord>& records, const ClockMap& clock, int rank, Pass pass,
                       const PassTimes& times, double offset, RankRecord& record) {
  const auto window_start = static_cast<double>(times.host_start_ns);
  const auto window_end = static_cast<double>(times.host_end_ns);
  for (const CuptiRecord& r : records) {
    if (r.start_ns == 0 || r.end_ns == 0) continue;
    const double start = clock.host_ns(r.start_ns);
    if (start < window_start || start > window_end) continue;
    record.activity.push_back(
        DeviceActivity{.rank = rank,
                       .cuda_stream = r.stream,
                       .kind = r.kind,
                       .name = r.name,
                       .copy_kind = r.copy_kind,
                       .pass = pass,
                       .start = offset + (start - window_start) * 1e-9,
                       .end = offset + (std::max(start, clock.host_ns(r.end_ns)) - window_start) * 1e-9,
                       .bytes = static_cast<double>(r.bytes),
                       .device = static_cast<int>(r.device),
                       .correlation = r.correlation});
  }
}

}  // namespace zb::cuda
