#pragma once
// What each rank of a cuda run measured, as bytes for MPI: its trace events (times relative to its own
// pass starts, which follow a world barrier) and, per message it sends first or receives last, when its
// first byte left or its last byte arrived (ring-step transfers span two GPUs, so they are put together
// after the gather); what CUPTI saw its GPU run; on a node's first rank, the node's NIC loads; and
// what the rank has to say about the run (a profiler it could not use). Pure C++, tested without CUDA.
#include <cstdint>
#include <string>
#include <vector>

#include "core/exec/trace.hpp"

namespace zb::cuda {

struct MessageSpan {
  int message = -1;
  double start = -1;  // ≥ 0 on the rank that sends its first leg
  double end = -1;    // ≥ 0 on the rank that receives its last leg
};

struct RankRecord {
  std::vector<TraceEvent> events;
  std::vector<MessageSpan> spans;
  std::vector<DeviceActivity> activity;  // CUPTI's records of the median repetitions, on the trace axis
  std::vector<LinkLoad> links;           // measured NIC loads of the rank's node (its first rank only)
  std::vector<std::string> notes;        // one line each, for the trace's note
};

[[nodiscard]] std::vector<char> encode(const RankRecord& record);
// Throws zb::Error (runtime) when the bytes are not a whole record.
[[nodiscard]] RankRecord decode(const std::vector<char>& bytes);

}  // namespace zb::cuda
