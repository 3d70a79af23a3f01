#pragma once
// The remap all-to-all-v on real rows. A plan move (src, dst, range) is stated in the to_linear
// direction: the to_linear remap moves the range's rows from src to dst, the to_attention remap moves
// them from dst back to src. Each rank sends one message per peer (all its ranges for that peer, with
// their headers) and drops the rows it sent, so a token is on exactly one rank after the exchange.
// The same code serves the layer (Q and K|V rows to the attention layout, O rows back to the linear
// layout) and the round-trip test (which proves rows return bit for bit).
#include <map>
#include <span>
#include <vector>

#include "core/exec/reference/row_store.hpp"
#include "core/exec/reference/transport.hpp"
#include "core/plan/plan.hpp"

namespace zb::reference {

struct RemapTraffic {
  std::map<int, std::vector<plan::Shard>> outgoing;  // peer → ranges this rank sends it
  std::map<int, std::vector<plan::Shard>> incoming;  // peer → ranges this rank receives from it
};

// This rank's part of a remap in `direction` (moves with neither end on this rank are ignored).
[[nodiscard]] RemapTraffic remap_traffic(int rank, const std::vector<plan::RemapMove>& moves,
                                         plan::RemapDirection direction);

// The stores whose rows travel, and how to name the exchange in errors ("rank 3 op 7 (remap)").
struct RemapEndpoint {
  int rank = 0;
  std::vector<RowStore*> stores;
  std::string context;
};

// Sends every outgoing range (all stores' rows, in store order) and erases them here. Throws naming the
// first token this rank does not hold. Returns the bytes sent.
std::int64_t send_remap_rows(Transport& transport, Tag tag, const RemapTraffic& traffic, const RemapEndpoint& endpoint);

// Takes what arrived from the peers in `waiting` (and removes them from it); each message must carry
// exactly the ranges expected from that peer, inside its sequence (`sequences` gives the lengths).
// Returns the bytes received.
std::int64_t receive_remap_rows(Transport& transport, Tag tag, const RemapTraffic& traffic, std::vector<int>& waiting,
                                const RemapEndpoint& endpoint, const std::vector<plan::Sequence>& sequences);

}  // namespace zb::reference
