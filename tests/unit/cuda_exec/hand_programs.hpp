#pragma once
// Small hand-made Programs for the cuda backend's order and trace tests.
#include "core/lower/program.hpp"

namespace zb::cuda {

// Two ranks that each send first and receive second: rendezvous-safe under the Program's rules (comm
// has no stream order), a deadlock when each rank issues its list in order on one stream.
inline lower::Program crossed_sends() {
  lower::Program p;
  p.world_size = 2;
  p.gpus_per_node = 2;
  p.ranks.resize(2);
  for (int r = 0; r < 2; ++r) {
    p.ranks[static_cast<std::size_t>(r)].rank = r;
    lower::Message m;
    m.src = r;
    m.dst = 1 - r;
    m.bytes = 1024;
    p.messages.push_back(m);
  }
  for (int r = 0; r < 2; ++r) {
    lower::Instr send, recv;
    send.kind = lower::InstrKind::send;
    send.stream = lower::Stream::comm;
    send.peer = 1 - r;
    send.match = 1;
    send.message = r;
    send.bytes = 1024;
    send.key = 1;
    send.name = "kv";
    recv = send;
    recv.kind = lower::InstrKind::recv;
    recv.match = 0;
    recv.message = 1 - r;
    recv.last_leg = true;
    lower::Instr attention;
    attention.kind = lower::InstrKind::attention;
    attention.deps = {1};
    attention.name = "attn";
    attention.seconds = 1e-3;
    p.ranks[static_cast<std::size_t>(r)].instrs = {send, recv, attention};
    p.ranks[static_cast<std::size_t>(r)].first_backward = 3;
  }
  return p;
}

}  // namespace zb::cuda
