#pragma once
// A head all-to-all on real rows (Ulysses, USP), as the Program lowers it (core/lower/
// lower_head_all_to_all.cpp): an all_to_all collective whose messages (one per sender → receiver pair
// of a u-group) name rows of one tensor and the heads they carry. What each direction means here:
//   * Q, K, V (forward, before attention) and dO (backward, to the heads' owners): the sender keeps its
//     rows (they are its own tokens, or the output gradient its own heads still need); the receiver
//     writes the message's head columns into its rows of those tokens;
//   * O (forward, after attention): the receiver writes the head columns into its own tokens' output
//     rows, whose other heads it computed itself or receives from the other members; the sender keeps
//     them when a backward pass follows (the saved activation of its heads' attention), else drops them;
//   * dQ, dK, dV (backward, back to the tokens' owners): the sender's rows of another member's tokens
//     are partial gradients of its heads, and leave with the message (dropped, so counted once). The
//     receiver adds them into its own rows once every message is in, in the collective's message order
//     (several members add into one K/V head when K/V heads are replicated), so the sums are the same
//     bits whatever the arrival order, in threads or under MPI.
// Each message travels as one transport message tagged with the collective's id, its payload the
// message id, then every slice's head columns, row-major (all_to_all_v.hpp).
#include <cstdint>
#include <map>
#include <string>

#include "core/exec/reference/head_slices.hpp"
#include "core/exec/reference/message_payload.hpp"
#include "core/exec/reference/transport.hpp"

namespace zb::reference {

// Whether a head all-to-all message carries gradients that are added on arrival (dQ, dK, dV).
[[nodiscard]] bool carries_partial_gradients(const lower::Message& message);

// Sends every message of head all-to-all `collective` whose src is `rank`, packed from `own`'s head
// columns, and drops what leaves (see above; `keep_output`: a backward pass follows). Throws zb::Error
// (runtime) naming `context` and the first row `own` lacks. Returns the payload bytes sent.
std::int64_t send_head_slices(Transport& transport, const lower::Program& program, int collective, int rank,
                              TensorRows& own, const HeadMap& heads, bool keep_output,
                              const std::string& context);

// Writes (or, for gradients, adds) the head columns of message `message`, received as `payload`, into
// `own`. Throws zb::Error (runtime) naming `context` when the payload is not that message's.
void store_head_slices(const lower::Program& program, int message, int rank,
                       std::span<const std::byte> payload, TensorRows& own, const HeadMap& heads,
                       const std::string& context);

// Adds the received gradient messages (message id → payload, every one of `collective` for `rank`) into
// `own`, in the collective's message order.
void add_head_partials(const lower::Program& program, int collective, int rank,
                       const std::map<int, Bytes>& received, TensorRows& own, const HeadMap& heads,
                       const std::string& context);

}  // namespace zb::reference
