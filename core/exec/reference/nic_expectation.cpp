#include "core/exec/reference/nic_expectation.hpp"

#include <map>
#include <utility>

#include "core/exec/reference/message_payload.hpp"

namespace zb::reference {
namespace {

using NicKey = std::pair<int, int>;  // (node, local NIC)

struct Expected {
  std::map<NicKey, double> tx, rx;
};

void add_crossing(Expected& e, const ClusterSpec& cluster, ReferenceOptions::NicPairing pairing, int src,
                  int dst, double bytes) {
  if (cluster.node_of(src) == cluster.node_of(dst) || !(bytes > 0)) return;
  const int out_nic = cluster.nic_of(src);
  const int in_nic = pairing == ReferenceOptions::NicPairing::sender_rail ? out_nic : cluster.nic_of(dst);
  e.tx[{cluster.node_of(src), out_nic}] += bytes;
  e.rx[{cluster.node_of(dst), in_nic}] += bytes;
}

}  // namespace

void set_expected_nic_bytes(std::vector<LinkLoad>& loads, const lower::Program& program,
                            const AttentionDims& dims, const ClusterSpec& cluster,
                            ReferenceOptions::NicPairing pairing) {
  Expected e;
  for (const lower::RankProgram& rp : program.ranks) {
    for (const lower::Instr& in : rp.instrs) {
      if (in.kind != lower::InstrKind::send) continue;
      const lower::Message& m = program.messages.at(static_cast<std::size_t>(in.message));
      const lower::ByteRange range =
          lower::payload_fragment(m, static_cast<std::int64_t>(payload_bytes(m, dims)), in.offset, in.bytes);
      add_crossing(e, cluster, pairing, rp.rank, in.peer, static_cast<double>(range.size()));
    }
  }
  for (const lower::Collective& c : program.collectives) {
    for (const int id : c.messages) {
      const lower::Message& m = program.messages.at(static_cast<std::size_t>(id));
      add_crossing(e, cluster, pairing, m.src, m.dst, static_cast<double>(payload_bytes(m, dims)));
    }
  }
  for (LinkLoad& load : loads) {
    if (!load.measured) continue;
    const auto& side = load.kind == LinkKind::nic_tx ? e.tx : e.rx;
    const auto it = side.find({load.node, load.index});
    load.expected_bytes = it == side.end() ? 0.0 : it->second;
  }
}

}  // namespace zb::reference
