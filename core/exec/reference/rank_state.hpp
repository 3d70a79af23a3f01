#pragma once
// RankState: everything one rank holds while it runs its instructions: its own rows (Q, K, V, the
// attention output O and its LSE, and in the backward pass dO, dQ and the dK/dV it accumulates), the
// buffers of the messages it received, and the trace events it records. Only the rank's own thread (or
// process) touches it; other ranks see it only through messages.
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "core/common/token_layout.hpp"
#include "core/exec/reference/expert_rows.hpp"
#include "core/exec/reference/head_slices.hpp"
#include "core/exec/reference/message_payload.hpp"
#include "core/exec/reference/qkv_generator.hpp"
#include "core/exec/reference/reference_options.hpp"
#include "core/exec/reference/row_store.hpp"
#include "core/exec/trace.hpp"
#include "core/lower/program.hpp"

namespace zb::reference {

using Clock = std::chrono::steady_clock;

class GradientReference;  // gradient_reference.hpp

// Read-only inputs shared by every rank of one run.
struct RunInputs {
  const lower::Program& program;
  const ReferenceOptions& options;
  QkvGenerator generator;
  Clock::time_point start;  // time zero of the trace
  // The float64 backward reference shared by the ranks of this process; set when the Program has a
  // backward pass. Every rank of this process inserts the row statistics of its own rows into it.
  GradientReference* gradients = nullptr;
  // Whether every rank runs in this process (threads), so that they share `gradients`; under MPI the
  // ranks send each other their row statistics instead.
  bool one_process = true;
  // The scenario's nominal NIC bandwidth (bytes/s per direction) and GPUs per node: the measured NIC
  // loads' nominal rate, and which node a rank's sampler is on.
  double nic_bandwidth = 0;
  // The Program's head ranges (model heads) as the reference's own heads; applies to nothing (every
  // head everywhere) under tensor parallelism or when the run names no model.
  HeadMap heads{};
};

// A message this rank receives (it is the message's dst): its payload, assembled fragment by fragment
// by the last-leg recvs, then its rows once every fragment is in.
struct Buffer {
  explicit Buffer(const AttentionDims& dims) : rows(dims) {}
  Bytes bytes;                 // the payload while fragments arrive; released once complete
  std::uint64_t received = 0;  // payload bytes arrived
  int fragments_left = 0;      // last-leg recvs of this rank not yet done
  bool complete = false;
  TensorRows rows;       // once complete: the slices' rows
  int readers_left = 0;  // instructions listing it in `reads` not yet done
};

struct RankState {
  RankState(const RunInputs& inputs, int rank);

  const RunInputs& in;
  int rank;
  AttentionDims dims;
  TensorRows own;                 // Q, K, V of the rows this rank holds; O, its attention output; gradients
  RowStore lse;                   // log-sum-exp of O's rows, width heads; −inf = no key seen yet
  std::map<int, Buffer> buffers;  // message id → the buffer of a message this rank receives
  ExpertRowsKept expert_rows;     // MoE rows received on the way to this rank's experts, until returned
  std::vector<TraceEvent> events;

  [[nodiscard]] RowStore& q() { return own.of(lower::Tensor::Q); }
  [[nodiscard]] RowStore& out() { return own.of(lower::Tensor::O); }
  [[nodiscard]] const RowStore& out() const { return own.of(lower::Tensor::O); }
  [[nodiscard]] const lower::Instr& instr(int id) const { return in.program.instr(rank, id); }
  [[nodiscard]] const lower::Message& message(int id) const {
    return in.program.messages[static_cast<std::size_t>(id)];
  }
  [[nodiscard]] double seconds_since_start() const {
    return std::chrono::duration<double>(Clock::now() - in.start).count();
  }
  // "rank 3 instr 17 (recv kv ← 2, group 2 step 1, fwd, plan op 9)": the start of every error about an
  // instruction (lower::describe).
  [[nodiscard]] std::string where(int id) const { return lower::describe(in.program, rank, id); }
  // Where instruction `id` finds rows: the rank's own, then the buffers of the messages it `reads`, in
  // its order. Throws naming the instruction when one of those buffers is not complete.
  [[nodiscard]] std::vector<const TensorRows*> sources(int id) const;
  // Appends an event for instruction `id` of this rank from `start` to now (op = its plan op).
  void record(int id, Track track, EventCategory category, double start, double bytes = 0, double flops = 0,
              int peer = -1);
};

}  // namespace zb::reference
