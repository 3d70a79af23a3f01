#pragma once
// CUPTI's activity records as plain data, and their place on the cuda backend's trace axis. Pure C++,
// no CUPTI header, built everywhere: the walk that turns CUPTI's own buffers into CuptiRecords is
// cupti_buffer.hpp (it needs libcupti, not a GPU), the collector that gets those buffers from a running
// GPU is cupti_activity.hpp. Keeping the records plain lets the trace, its codec and their tests work
// on machines without CUDA.
//
// Clocks. CUPTI stamps its records with its own nanosecond clock (cuptiGetTimestamp); the executor
// brackets each pass with the host's steady clock (PassTimes::host_start_ns, host_end_ns). The collector
// reads both clocks at one moment when it starts and again when it stops, and ClockMap maps CUPTI time
// onto the host clock linearly through those two pairs (an offset and any drift between the clocks). A
// record then lands on the trace axis at `offset + (its host time − the pass's host start)`. The pass's
// item events count from the GPU's pass-start event instead, which an idle device runs a few
// microseconds after the host's reading: CUPTI's slices sit that much later than the items' on the axis.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/exec/cuda/trace_codec.hpp"
#include "core/exec/cuda/trace_events.hpp"
#include "core/exec/trace.hpp"

namespace zb::cuda {

// One activity record: a kernel (NCCL's marked apart), a memory copy or a memset.
struct CuptiRecord {
  DeviceActivityKind kind = DeviceActivityKind::kernel;
  std::string name;                        // kernels: readable (demangled); "memcpy DtoD"; "memset"
  std::uint64_t start_ns = 0, end_ns = 0;  // CUPTI's clock; 0 where CUPTI could not time it
  std::uint32_t device = 0;
  std::uint32_t stream = 0;       // CUPTI's stream id
  std::uint32_t correlation = 0;  // the id of the API call that launched it
  std::uint64_t bytes = 0;        // memcpy, memset
  std::string copy_kind;          // memcpy: "HtoD", "DtoH", "DtoD", "PtoP", ...
};

// Now on the host's steady clock, in nanoseconds: the clock of PassTimes' host window.
[[nodiscard]] std::int64_t host_clock_ns();

// A kernel's name as CUPTI reports it (Itanium-mangled for C++ kernels) in readable form: demangled when
// it demangles, unchanged otherwise ("ampere_bf16_gemm" and other C names).
[[nodiscard]] std::string readable_kernel_name(const char* name);
// NCCL's kernels, by readable name: "ncclDevKernel_…" (NCCL 2.19 and later), "ncclKernel_…" (before).
[[nodiscard]] bool is_nccl_kernel(std::string_view readable_name);

// The two clocks read at one moment.
struct ClockPair {
  std::uint64_t cupti_ns = 0;
  std::int64_t host_ns = 0;
};

class ClockMap {
 public:
  ClockMap() = default;
  // The line through `first` and `last`; slope 1 (an offset only) when they share a CUPTI time.
  ClockMap(ClockPair first, ClockPair last);
  [[nodiscard]] double host_ns(std::uint64_t cupti_ns) const;

 private:
  ClockPair first_;
  double slope_ = 1;
};

// Appends to `record.activity` the records that started inside `times`' host window, as `rank`'s
// activity of `pass`, `offset` seconds later on the trace axis (the backward layer follows the forward
// one). Records CUPTI could not time (a zero start or end) are left out.
void add_pass_activity(const std::vector<CuptiRecord>& records, const ClockMap& clock, int rank, Pass pass,
                       const PassTimes& times, double offset, RankRecord& record);

}  // namespace zb::cuda
