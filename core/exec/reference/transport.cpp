#include "core/exec/reference/transport.hpp"

#include <string>

#include "core/exec/reference/rank_location.hpp"

namespace zb::reference {

std::string describe(Tag tag) {
  const std::string id = std::to_string(tag.id());
  switch (tag.kind()) {
    case MessageKind::transfer:
      return "transfer key " + id;
    case MessageKind::collective:
      return "collective " + id + " message";
    case MessageKind::finished:
      return "end-of-layer notice";
    case MessageKind::result:
      return "result record";
    case MessageKind::abort:
      return "abort notice";
    case MessageKind::pass_done:
      return "end-of-forward notice";
    case MessageKind::ping:
      return "liveness ping";
    case MessageKind::pong:
      return "liveness answer";
    case MessageKind::drained:
      return "all-received notice";
    case MessageKind::stalled:
      return "stall notice";
  }
  return "message " + std::to_string(tag.value);
}

Bytes Transport::recv(int src, Tag tag, std::chrono::milliseconds timeout) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    if (auto payload = try_recv(src, tag)) return std::move(*payload);
    for (const MessageKind kind : {MessageKind::abort, MessageKind::stalled}) {
      if (auto aborted = try_recv_kind(kind)) {
        throw PeerFailed(
            ExitCode::runtime, rank_location(rank()),
            "stopped waiting for " + describe(tag) + " from rank " + std::to_string(src) + ": rank " +
                std::to_string(aborted->src) + (kind == MessageKind::abort ? " failed: " : " stalled: ") +
                std::string(reinterpret_cast<const char*>(aborted->payload.data()), aborted->payload.size()));
      }
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0 || !wait_for_message(left)) {
      if (auto payload = try_recv(src, tag)) return std::move(*payload);
      // What recv waits for is the executor's own (fingerprints, results, row statistics), never a
      // plan's transfer: a sender that does not send it has stopped or failed before it.
      throw WaitTimedOut(ExitCode::runtime, rank_location(rank()),
                         "waited " + std::to_string(timeout.count()) + " ms for " + describe(tag) +
                             " from rank " + std::to_string(src) + " and nothing came",
                         "rank " + std::to_string(src) + " stopped or failed before it sent it");
    }
  }
}

}  // namespace zb::reference
