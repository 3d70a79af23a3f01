#pragma once
// RankState: everything one rank holds while it runs its op list: its own rows (Q, K|V, attention
// output O and its LSE), the KV parcels its recv ops brought in, and the trace events it records.
// Only the rank's own thread (or process) touches it; other ranks see it only through messages.
#include <chrono>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/exec/reference/qkv_generator.hpp"
#include "core/exec/reference/reference_options.hpp"
#include "core/exec/reference/row_store.hpp"
#include "core/exec/trace.hpp"
#include "core/plan/plan.hpp"

namespace zb::reference {

using Clock = std::chrono::steady_clock;

// Read-only inputs shared by every rank of one run.
struct RunInputs {
  const plan::Plan& plan;
  const ReferenceOptions& options;
  QkvGenerator generator;
  Clock::time_point start;  // time zero of the trace
};

struct RankState {
  RankState(const RunInputs& inputs, int rank);

  const RunInputs& in;
  int rank;
  AttentionDims dims;
  RowStore q;    // Q rows, width heads·head_dim
  RowStore kv;   // K then V of each row, width 2·kv_heads·head_dim
  RowStore out;  // attention output O, width heads·head_dim (the hidden rows the to_linear remap moves)
  RowStore lse;  // log-sum-exp of O's rows, width heads; −inf = no key seen yet
  std::map<int, RowStore> parcels;        // recv op id → the K|V rows it brought
  std::vector<std::vector<int>> sources;  // op id → recv ops it depends on, directly or transitively
  std::vector<TraceEvent> events;

  [[nodiscard]] const plan::Op& op(int id) const {
    return in.plan.ranks[static_cast<std::size_t>(rank)].ops[static_cast<std::size_t>(id)];
  }
  [[nodiscard]] std::int64_t length_of(int seq) const {
    return in.plan.sequences.at(static_cast<std::size_t>(seq)).length;
  }
  [[nodiscard]] double seconds_since_start() const {
    return std::chrono::duration<double>(Clock::now() - in.start).count();
  }
  // "op 12 (attention, group 2, step 1)": the start of every error about an op (the rank is in the
  // error's Location).
  [[nodiscard]] std::string where(const plan::Op& op) const;
  // Appends an event for `op` of this rank from `start` to now.
  void record(const plan::Op& op, Stream stream, EventCategory category, double start, double bytes = 0,
              double flops = 0);
};

// Copies K|V rows [begin, end) of `seq` into `out` from the rank's own rows or the parcels of
// `recv_ops`, whichever holds each run of tokens; returns the first token no source holds, if any.
[[nodiscard]] std::optional<std::int64_t> gather_kv(const RankState& state, const std::vector<int>& recv_ops, int seq,
                                                    std::int64_t begin, std::int64_t end, std::span<float> out);

}  // namespace zb::reference
