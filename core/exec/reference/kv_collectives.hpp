#pragma once
// Llama-3 CP's K/V collectives on real rows, as the Program lowers them (core/lower/lower_kv_gather.cpp):
//   * all_gather (the forward, and the backward's re-gather): a member sends every other member its own
//     K|V rows of the group (its message's slices) and keeps them; a member stores each message it
//     receives in that message's buffer, which the attention instructions that `read` it compute with;
//   * reduce_scatter (the adjoint): a member sends every other member the partial dK|dV it computed of
//     that member's key rows (zeros where it computed none) and drops them, so a partial is counted once;
//     the owner adds what it received into its own rows once all of it is in, in the collective's message
//     order, so the sums do not depend on arrival order (or on threads against MPI).
// Each message travels as one transport message tagged with the collective's id (all_to_all_v.hpp).
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "core/exec/reference/message_payload.hpp"
#include "core/exec/reference/transport.hpp"
#include "core/lower/program.hpp"

namespace zb::reference {

// What the reference does with a collective's rows.
enum class CollectiveRows {
  none,     // no messages (an opaque collective, e.g. tensor parallelism's hidden states): done once posted
  remap,    // all_to_all_v: rows change owner (all_to_all_v.hpp)
  gather,   // all_gather with messages: copies of each member's K|V into the others' buffers
  scatter,  // reduce_scatter with messages: partial dK|dV summed on their owners
  heads,    // all_to_all with messages: head slices of a u-group's rows (head_all_to_all.hpp)
  expert,   // an MoE dispatch or combine: rows out to the experts and back through them (expert_rows.hpp)
};

// How the reference runs `collective`; nullopt for messages on a kind it does not move rows for
// (all_reduce).
[[nodiscard]] std::optional<CollectiveRows> collective_rows_of(const lower::Collective& collective);

// An all-gather sends with send_collective(…, SentRows::kept) (all_to_all_v.hpp).

// Sends every message of reduce-scatter `collective` whose src is `rank`: the rank's partial rows of the
// message's dK|dV slices (zeros where absent), which it then drops from `own`. Returns the payload bytes.
std::int64_t send_partials(Transport& transport, const lower::Program& program, int collective, int rank,
                           TensorRows& own, const AttentionDims& dims, const std::string& context);

// Adds the received partials (message id → payload, every message of `collective` for `rank`) into
// `own`, in the collective's message order. Throws zb::Error (runtime) naming `context` when a payload is
// not its message's.
void add_partials(const lower::Program& program, int collective, int rank,
                  const std::map<int, Bytes>& received, TensorRows& own, const AttentionDims& dims,
                  const std::string& context);

}  // namespace zb::reference
