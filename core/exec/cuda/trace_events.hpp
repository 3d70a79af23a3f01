#pragma once
// From measured item times to the Trace, filled as the simulator fills it (core/exec/sim/trace_builder):
// compute events (attention, gemm) with their FLOPs; one send and one recv event per message and end
// on the comm stream with the message's bytes and peer; collectives (remap for all_to_all_v,
// tensor_parallel for hidden-row all-gathers and reduce-scatters, collective otherwise); the legs of
// routed messages on the pushing GPU's nic stream; and, across ranks, one RingStepTransfer per K/V or
// dK/dV hop from its first byte leaving the source to its last byte arriving. Pure C++: tested here.
#include <cstdint>
#include <string>
#include <vector>

#include "core/exec/cuda/nccl_order.hpp"
#include "core/exec/cuda/trace_codec.hpp"
#include "core/exec/trace.hpp"

namespace zb::cuda {

// One pass as this rank measured it: seconds from the pass start to its end, and each issue item's
// start and end (seconds from the pass start), parallel to the pass's items of the rank's issue list.
// The host window (host_clock_ns, cupti_records.hpp) brackets the pass on the device: its start is read
// just before the pass-start event is recorded on an idle device, its end once the pass-end event has
// completed, so every kernel of the pass starts inside it and none of the barriers' around it does.
// `seconds` is the device span, from the pass-start event (recorded before the host enqueues the pass's
// first item, so it includes any wait for the host's launches) to the end of both streams;
// `enqueue_seconds` the host's time from just before that event to its last enqueue call: close to
// `seconds`, the pass was bound by the host's launches rather than the GPU.
struct PassTimes {
  double seconds = 0;
  double enqueue_seconds = 0;
  std::vector<double> start, end;
  std::int64_t host_start_ns = 0, host_end_ns = 0;
};

// Appends the events of `rank`'s items of `pass` to `record`, `offset` seconds later on the trace axis
// (the backward layer follows the forward one), and the spans of the messages it starts or ends.
void add_pass_events(const lower::Program& program, const GlobalOrder& order, int rank, Pass pass,
                     const PassTimes& times, double offset, RankRecord& record);

// Every rank's record into `trace`: events sorted by (pass, rank, stream, start, op), ring steps and
// their statistics, CUPTI's activity sorted by (pass, rank, stream, start), the nodes' NIC loads in rank
// order. The layer times and the note are the caller's.
void assemble_trace(const lower::Program& program, const std::vector<RankRecord>& records, Trace& trace);

// The ranks' notes, each distinct one once (in rank order), joined by "; ": what several ranks say
// alike (every node without InfiniBand) is said once.
[[nodiscard]] std::string distinct_notes(const std::vector<RankRecord>& records);

}  // namespace zb::cuda
