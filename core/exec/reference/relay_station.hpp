#pragma once
// Routed sends, really relayed. Zeppelin's routing layer sends part i of a transfer src → proxies[i]
// (NVLink) → peer_proxies[i] (over the NIC of proxies[i]) → dst (NVLink), each part in `chunks` pieces
// so the legs pipeline. The proxies' op lists do not mention the relay, so every rank runs a relay
// station inside its loop (and keeps running it after its own ops are done, until every rank is done):
// a piece carries its whole path, the station forwards pieces meant for others and assembles the ones
// meant for its own recvs.
#include <cstdint>
#include <map>
#include <optional>
#include <utility>

#include "core/exec/reference/rank_state.hpp"
#include "core/exec/reference/transport.hpp"

namespace zb::reference {

class RelayStation {
 public:
  explicit RelayStation(RankState& state) : state_(state) {}

  // Cuts `payload` into the send's parts (in proportion to route.part_bytes) and chunks and sends each
  // piece to its first hop. Throws when the route is malformed.
  void send_routed(Transport& transport, const plan::Op& send, const Bytes& payload);

  // Handles every relay piece that has arrived: forwards the ones for other ranks (recording a relay
  // event on this rank's nic stream) and assembles the ones for this rank. True when it handled any.
  bool pump(Transport& transport);

  // The payload of a routed send from `src` with plan tag `tag`, once every piece has arrived.
  [[nodiscard]] std::optional<Bytes> take_assembled(int src, int tag);

  // "routed transfer tag 5 from rank 2 (3 of 8 bytes arrived)": what is left over after the layer,
  // empty when nothing is (a leftover means a routed send no recv took).
  [[nodiscard]] std::string leftovers() const;

 private:
  struct Assembly {
    Bytes bytes;
    std::uint64_t received = 0;
  };
  using Key = std::pair<int, int>;  // (origin rank, plan tag)

  RankState& state_;
  std::uint64_t next_piece_ = 0;  // makes each piece's transport tag distinct, for readable errors
  std::map<Key, Assembly> assemblies_;
};

}  // namespace zb::reference
