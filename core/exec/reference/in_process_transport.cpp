#include "core/exec/reference/in_process_transport.hpp"

#include "core/exec/reference/rank_location.hpp"

namespace zb::reference {

InProcessFabric::InProcessFabric(int ranks) {
  inboxes_.reserve(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) inboxes_.push_back(std::make_unique<Inbox>());
}

InProcessTransport::InProcessTransport(InProcessFabric& fabric, int rank) : fabric_(fabric), rank_(rank) {}

void InProcessTransport::send(int dst, Tag tag, Bytes payload) {
  if (dst < 0 || dst >= size()) {
    throw Error(ExitCode::runtime, rank_location(rank_),
                "send of " + describe(tag) + " to rank " + std::to_string(dst) +
                    ", which is not in the world of " + std::to_string(size()) + " ranks");
  }
  InProcessFabric::Inbox& inbox = *fabric_.inboxes_[static_cast<std::size_t>(dst)];
  {
    const std::lock_guard lock(inbox.mutex);
    inbox.mailbox.put(Envelope{rank_, tag, std::move(payload)});
    ++inbox.arrivals;
  }
  inbox.arrived.notify_all();
}

std::optional<Bytes> InProcessTransport::try_recv(int src, Tag tag) {
  InProcessFabric::Inbox& inbox = own_inbox();
  const std::lock_guard lock(inbox.mutex);
  return inbox.mailbox.take(src, tag);
}

std::optional<Envelope> InProcessTransport::try_recv_kind(MessageKind kind) {
  InProcessFabric::Inbox& inbox = own_inbox();
  const std::lock_guard lock(inbox.mutex);
  return inbox.mailbox.take_kind(kind);
}

bool InProcessTransport::wait_for_message(std::chrono::milliseconds timeout) {
  InProcessFabric::Inbox& inbox = own_inbox();
  std::unique_lock lock(inbox.mutex);
  const bool arrived =
      inbox.arrived.wait_for(lock, timeout, [&] { return inbox.arrivals != seen_arrivals_; });
  seen_arrivals_ = inbox.arrivals;
  return arrived;
}

}  // namespace zb::reference
