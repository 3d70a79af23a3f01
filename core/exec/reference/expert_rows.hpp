#pragma once
// An MoE dispatch or combine on the reference backend (core/strategies/moe_layer.hpp): each message of the
// exchange carries its `rows` hidden rows at the stand-in width (AttentionDims::q_width floats a row), every
// float stamped with what it is (message, row, column), and its receiver checks that every row arrived, from
// the right sender, unchanged. Which tokens the rows are is the router's, which the Program does not name;
// what this proves is that every part of every exchange, forward and backward, moves whole between the
// members it names.
#include <cstdint>
#include <span>
#include <string>

#include "core/exec/reference/qkv_generator.hpp"
#include "core/exec/reference/transport.hpp"
#include "core/lower/program.hpp"

namespace zb::reference {

// Sends every message of exchange `collective` whose src is `rank`. Returns the payload bytes sent.
std::int64_t send_expert_rows(Transport& transport, const lower::Program& program, int collective, int rank,
                              const AttentionDims& dims);

// Checks message `message` of an exchange, received as `payload`: its header, its row count and every
// stamp. Throws zb::Error (runtime) naming `context`, the rank and the sender otherwise.
void check_expert_rows(const lower::Program& program, int message, int rank,
                       std::span<const std::byte> payload, const AttentionDims& dims,
                       const std::string& context);

}  // namespace zb::reference
