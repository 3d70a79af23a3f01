#pragma once
// The remap on real rows: an all_to_all_v collective of the Program, whose Collective lists its
// messages (one per sender → receiver pair, each message's slices = the rows it moves: O rows for
// to_linear; Q, then K, then V rows for to_attention). A member sends each message it is the src of and
// drops the rows it sent, so a token is on exactly one rank after the exchange; it stores each message
// it is the dst of into its own rows. Each message travels as one transport message tagged with the
// collective's id (a pair has at most one message per collective); its payload is the message id, then
// the slices' rows (message_payload.hpp). The layer and the round-trip test both use these functions.
#include <cstdint>
#include <string>
#include <vector>

#include "core/exec/reference/message_payload.hpp"
#include "core/exec/reference/transport.hpp"
#include "core/lower/program.hpp"

namespace zb::reference {

[[nodiscard]] Tag collective_tag(int collective);

// Every collective message travels as its message id, then its rows. A payload holding only the id, to
// which the rows are appended.
[[nodiscard]] Bytes collective_payload_header(int message);
// The rows of a received collective payload, after checking that it is message `message`. Throws
// zb::Error (runtime) naming `context`, `rank` and the sender otherwise.
[[nodiscard]] std::span<const std::byte> collective_rows(const lower::Program& program, int message, int rank,
                                                         std::span<const std::byte> payload,
                                                         const std::string& context);

// The messages of `collective` that `rank` receives, in the collective's order.
[[nodiscard]] std::vector<int> incoming_messages(const lower::Program& program, int collective, int rank);

// What a sender keeps of the rows it sent: none (a remap: each token ends on one rank), the O rows (a
// forward remap followed by a backward pass: the attention rank keeps O as the saved activation its
// backward needs, as FlashAttention saves O and LSE), or all of them (a K/V all-gather sends copies).
enum class SentRows { dropped, o_kept, kept };

// Sends every message of `collective` whose src is `rank` to its dst, packed from `own`, and erases the
// sent rows from `own` as `sent` says. Throws zb::Error (runtime) naming `context` and the first row
// `own` lacks. Returns the payload bytes sent.
std::int64_t send_collective(Transport& transport, const lower::Program& program, int collective, int rank,
                             TensorRows& own, const AttentionDims& dims, const std::string& context,
                             SentRows sent = SentRows::dropped);

// Stores message `message` of a collective, received as `payload`, into `own`. Throws zb::Error
// (runtime) naming `context` when the payload is not that message's.
void accept_collective_message(const lower::Program& program, int message, int rank,
                               std::span<const std::byte> payload, TensorRows& own, const AttentionDims& dims,
                               const std::string& context);

}  // namespace zb::reference
