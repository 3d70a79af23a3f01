#pragma once
// ParcelLifetimes: frees each recv op's KV parcel as soon as no op that may read it is left.
//
// A ring rank receives one parcel per peer and step; kept to the end of the layer they add up to a
// copy of every sequence of the group on every rank. An op may read a parcel only when the recv is in
// its sources (state.sources: the recvs it depends on, transitively) and it reads a token the parcel
// holds, so a parcel is dropped once every such op (attention ops by their blocks' key ranges, sends
// by the KV they forward) is done. That is conservative: gather_kv still finds, for every op, exactly
// the parcels it would have found had nothing been freed, so results and error messages do not change.
#include <vector>

#include "core/exec/reference/rank_state.hpp"

namespace zb::reference {

class ParcelLifetimes {
 public:
  explicit ParcelLifetimes(const RankState& state);

  // Op `id` of this rank is done: drops from state.parcels the parcels it was the last reader of (and
  // the parcel of a recv that no op will read).
  void op_done(RankState& state, int id);

 private:
  std::vector<std::vector<int>> reads_from_;  // op id → recvs whose parcel it may read
  std::vector<int> readers_left_;             // recv op id → those of its readers not yet done
};

}  // namespace zb::reference
