#pragma once
// KV parcels: what a plan send/recv carries. A transfer moves `kv_owner`'s zigzag K|V chunks of the
// transfer's `group` (every sequence of the group), so the receiver can tell from its own recv op which
// token ranges arrive. The payload repeats (group, kv_owner) so that a transfer that reaches the wrong
// recv is reported as such instead of being read as the wrong tokens.
#include <vector>

#include "core/exec/reference/rank_state.hpp"
#include "core/exec/reference/transport.hpp"

namespace zb::reference {

// The token ranges `kv_owner` holds of `group`'s sequences in the attention layout (its two zigzag
// chunks per sequence, or whole sequences for a group of one), empty ranges left out.
[[nodiscard]] std::vector<plan::Shard> kv_owner_shards(const plan::Plan& plan, int group, int kv_owner);

// The payload of a send op: from the rank's own rows when it is the owner, otherwise from the parcels
// of the recvs the send depends on (a ring passes on what it received). Throws naming the first token
// the rank does not hold.
[[nodiscard]] Bytes pack_kv_parcel(const RankState& state, const plan::Op& send);

// Stores a recv op's payload as its parcel; throws when it is not the (group, kv_owner) the op expects.
void unpack_kv_parcel(RankState& state, const plan::Op& recv, const Bytes& payload);

}  // namespace zb::reference
