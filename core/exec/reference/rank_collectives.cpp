// RankRunner's collective instructions: the remap's all_to_all_v (rows change owner), a K/V all-gather
// (copies into the buffers its attention reads) and its reduce-scatter of dK/dV (partials summed on the
// owners), a head all-to-all (head slices of a u-group's rows, head_all_to_all.hpp), an MoE dispatch or
// combine (hidden rows out to the experts and back through them, expert_rows.hpp), and opaque collectives
// without messages, which move nothing and are done once posted.
#include "core/exec/reference/all_to_all_v.hpp"
#include "core/exec/reference/expert_rows.hpp"
#include "core/exec/reference/head_all_to_all.hpp"
#include "core/exec/reference/rank_runner.hpp"

namespace zb::reference {

using lower::Instr;

void RankRunner::start_collective(int id, CollectiveProgress& c) {
  const Instr& in = state_.instr(id);
  const lower::Program& program = state_.in.program;
  c.rows = *collective_rows_of(
      program.collectives[static_cast<std::size_t>(in.collective)]);  // checked before running
  switch (c.rows) {
    case CollectiveRows::none:
      return;
    case CollectiveRows::remap: {
      // Forward O rows stay on their attention rank too when a backward pass follows: its saved activation.
      const SentRows sent = program.backward && in.pass == Pass::fwd ? SentRows::o_kept : SentRows::dropped;
      c.bytes = send_collective(transport_, program, in.collective, state_.rank, state_.own, state_.dims,
                                state_.where(id), sent);
      break;
    }
    case CollectiveRows::gather:
      c.bytes = send_collective(transport_, program, in.collective, state_.rank, state_.own, state_.dims,
                                state_.where(id), SentRows::kept);
      break;
    case CollectiveRows::scatter:
      c.bytes = send_partials(transport_, program, in.collective, state_.rank, state_.own, state_.dims,
                              state_.where(id));
      break;
    case CollectiveRows::expert:
      c.bytes = send_expert_rows(transport_, program, in.collective, state_.rank, state_.dims, expert_leg(in),
                                 state_.expert_rows, state_.where(id));
      break;
    case CollectiveRows::heads:
      c.bytes = send_head_slices(transport_, program, in.collective, state_.rank, state_.own, state_.in.heads,
                                 program.backward, state_.where(id));
      break;
  }
  c.waiting = incoming_messages(program, in.collective, state_.rank);
}

void RankRunner::store_collective_message(int id, CollectiveProgress& c, int message, const Bytes& payload) {
  const lower::Program& program = state_.in.program;
  switch (c.rows) {
    case CollectiveRows::none:
      break;
    case CollectiveRows::remap:
      accept_collective_message(program, message, state_.rank, payload, state_.own, state_.dims,
                                state_.where(id));
      break;
    case CollectiveRows::gather: {
      Buffer& buffer = state_.buffers.at(message);  // made for every gathered message before running
      accept_collective_message(program, message, state_.rank, payload, buffer.rows, state_.dims,
                                state_.where(id));
      buffer.complete = true;
      if (buffer.readers_left <= 0) state_.buffers.erase(message);
      break;
    }
    case CollectiveRows::scatter:
      c.partials.emplace(message, payload);
      break;
    case CollectiveRows::expert:
      accept_expert_rows(program, message, state_.rank, payload, state_.dims, expert_leg(state_.instr(id)),
                         state_.expert_rows, state_.where(id));
      break;
    case CollectiveRows::heads:
      if (carries_partial_gradients(program.messages[static_cast<std::size_t>(message)])) {
        c.partials.emplace(message, payload);
      } else {
        store_head_slices(program, message, state_.rank, payload, state_.own, state_.in.heads,
                          state_.where(id));
      }
      break;
  }
  c.bytes += static_cast<std::int64_t>(payload.size() - sizeof(std::int32_t));
}

bool RankRunner::advance_collective(int id) {
  const Instr& in = state_.instr(id);
  auto [it, first] = collectives_.try_emplace(id);
  CollectiveProgress& c = it->second;
  bool progress = false;
  if (first) {
    start_collective(id, c);
    progress = true;
  }
  for (auto m = c.waiting.begin(); m != c.waiting.end();) {
    const auto got = collective_arrived_.find(*m);
    if (got == collective_arrived_.end()) {
      ++m;
      continue;
    }
    store_collective_message(id, c, *m, got->second);
    collective_arrived_.erase(got);
    collective_stored_.insert(*m);
    m = c.waiting.erase(m);
    progress = true;
  }
  if (!c.waiting.empty()) return progress;
  if (c.rows == CollectiveRows::scatter) {
    add_partials(state_.in.program, in.collective, state_.rank, c.partials, state_.own, state_.dims,
                 state_.where(id));
    c.partials.clear();
  }
  if (c.rows == CollectiveRows::heads && !c.partials.empty()) {
    add_head_partials(state_.in.program, in.collective, state_.rank, c.partials, state_.own, state_.in.heads,
                      state_.where(id));
    c.partials.clear();
  }
  const EventCategory category =
      c.rows == CollectiveRows::remap ? EventCategory::remap : EventCategory::collective;
  state_.record(id, Track::comm, category, posted_at_[static_cast<std::size_t>(id)],
                static_cast<double>(c.bytes));
  done(id);
  return true;
}

}  // namespace zb::reference
