#pragma once
// Flow arrows of the Perfetto trace: one from each send slice to the recv slice of the same message.
//
// The Trace has no message id, so the two ends are matched the way MPI orders messages: a send of rank
// S to rank D and a recv of D from S with the same pass, micro-batch, CP group, ring step and bytes pair
// up in start order (the k-th such send with the k-th such recv). An end without a partner (a backend
// that lost one) gets no arrow rather than a wrong one.
//
// Each arrow is a flow start ("ph": "s") and a flow finish ("ph": "f", "bp": "e") with one id, the same
// name and cat, each placed strictly inside its slice (its midpoint) so that viewers bind it to that
// slice and not to a neighbour that ends or starts at the same instant; the finish is never before the
// start, which Perfetto would drop.
#include <cstddef>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/exec/trace.hpp"
#include "reports/trace_tracks.hpp"

namespace zb::reports {

struct TransferPair {
  std::size_t send = 0;  // indices into trace.events
  std::size_t recv = 0;
};

// Pairs in send order (trace.events order), so flow ids are the same for the same trace.
[[nodiscard]] std::vector<TransferPair> match_transfers(const Trace& trace);

// The "s" and "f" events of every matched pair, ids 1, 2, ... in pair order.
void add_transfer_flows(const Trace& trace, const TrackLayout& layout, nlohmann::ordered_json& events);

}  // namespace zb::reports
