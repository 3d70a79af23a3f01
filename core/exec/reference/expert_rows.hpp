#pragma once
// An MoE dispatch or combine on the reference backend (core/strategies/moe_layer.hpp), on real numbers.
//
// An exchange pair takes rows to the experts and brings them back: forward, the dispatch then the combine;
// backward, the combine's gradient exchange ("combine bwd") then the dispatch's ("dispatch bwd"). On the
// way out, each message carries `rows` hidden rows at the stand-in width (AttentionDims::q_width floats a
// row) that its sender draws from (sender, receiver, micro-batch, pass, row): which tokens they are is the
// router's, which the Program does not name, so a message's row r stands for the r-th choice the sender
// routed to that member. The receiver checks that they arrived unchanged and keeps them. On the way back,
// the member runs every row it kept through its stand-in expert, an FFN of the stand-in width whose
// weights are the member's own and the pass's, y = W2·silu(W1·x), in float, and returns the rows in the
// order it received them. The token owner checks each returned row against a float64 evaluation of the
// same member's expert on the row it sent (relative error at most 1e-4): so every row reached the member
// holding its experts, went through them, and came back in its place, forward and backward.
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "core/exec/reference/qkv_generator.hpp"
#include "core/exec/reference/transport.hpp"
#include "core/lower/program.hpp"

namespace zb::reference {

// Rows a member received on the way out, kept until it returns them: (micro-batch, pass, sender) → rows.
using ExpertRowsKept = std::map<std::tuple<int, int, int>, std::vector<float>>;

// Which way exchange instruction `in` moves rows: out to the experts (forward dispatch, backward combine),
// back from them (forward combine, backward dispatch), or, for an all_to_all_v a hand-written plan names
// otherwise, out only (its rows are checked on arrival and not returned).
enum class ExpertLeg { out, back, out_only };
[[nodiscard]] ExpertLeg expert_leg(const lower::Instr& in);

// Sends every message of exchange `collective` whose src is `rank`: drawn rows on the way out, the rows
// kept from the message's dst run through this rank's expert on the way back (erased from `kept`).
// Returns the payload bytes sent. Throws zb::Error (runtime) naming `context` when a return has no rows
// kept, or a different number of rows than were received.
std::int64_t send_expert_rows(Transport& transport, const lower::Program& program, int collective, int rank,
                              const AttentionDims& dims, ExpertLeg leg, ExpertRowsKept& kept,
                              const std::string& context);

// Checks message `message` of an exchange, received as `payload`: its header and row count, then on the way
// out every float (and keeps the rows), on the way back every row against the float64 expert of its sender.
// Throws zb::Error (runtime) naming `context`, the rank and the sender otherwise.
void accept_expert_rows(const lower::Program& program, int message, int rank,
                        std::span<const std::byte> payload, const AttentionDims& dims, ExpertLeg leg,
                        ExpertRowsKept& kept, const std::string& context);

// The stand-in expert of `member` in `pass` on one row of `width` floats, in float and in float64 (the
// check's reference).
void expert_forward(int member, Pass pass, std::span<const float> x, std::span<float> y);
void expert_forward(int member, Pass pass, std::span<const double> x, std::span<double> y);

}  // namespace zb::reference
