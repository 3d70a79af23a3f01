#pragma once
// The backward pass's own data movements on real rows, as the Program lowers them
// (core/lower/lower_backward.cpp):
//   * the output gradient dO starts on the rows of each rank's linear layout (where the layer's output
//     is), seeded like Q, K and V; the inverse of the to_linear remap brings it to the attention layout;
//   * dK/dV partials of a key row accumulate in the rank's own dK/dV rows, whoever owns the key. An
//     accumulator message (Purpose::dkv, slices = dK and dV of one owner's key shards) carries, per row,
//     the accumulator it `reads` (received from the previous rank of the owner's chain) plus this rank's
//     partial, and the partial leaves with it (the rows are dropped here): a partial is counted once,
//     on whichever rank it travels to;
//   * an accumulator that no instruction forwards is finished where it arrives (the owner, at the end of
//     its chain): it is added into that rank's own rows.
// Every addition happens at a point the Program orders (a send after the attention steps and the recv
// it depends on; a finished delivery after the owner's own partial left), so the bits are the same
// whatever the timing.
#include <span>
#include <string>

#include "core/exec/reference/rank_state.hpp"

namespace zb::reference {

// rows[seq][begin, end) += values (row-major, (end − begin) · width), allocating absent rows as zeros
// and marking them present.
void add_rows(RowStore& into, int seq, std::int64_t begin, std::int64_t end, std::span<const float> values);

// rows += the present rows of `from` in [begin, end) (row-major, rows[0] is token `begin`); absent rows add
// nothing. Returns how many rows it added.
std::int64_t add_present(const RowStore& from, int seq, std::int64_t begin, std::int64_t end,
                         std::span<float> rows);

// dO of every row of the rank's linear layout, from the generator (QkvTensor::d_o).
void seed_output_gradients(RankState& state);

// Packs the payload of accumulator send `id` (its message's slices, dK then dV rows as listed): the sum
// of the rows of the accumulators it reads and of this rank's own partial; rows none of them holds are
// zero. Drops the partial rows it packed. Returns what is wrong (a slice that is not dK/dV, or rows of a
// read accumulator that the slices leave out, which would lose them), empty when packed.
[[nodiscard]] std::string pack_accumulator(RankState& state, int id, Bytes& out);

// Adds a finished accumulator (the rows of delivered message `message`) into the rank's own rows.
void accumulate_delivery(RankState& state, const TensorRows& rows, const lower::Message& message);

}  // namespace zb::reference
