#pragma once
// The in-process transport: every rank is a thread of this process and owns an inbox (a mailbox, a
// mutex and a condition variable). A send moves the payload into the destination's inbox and wakes it,
// so sends never block and the bytes really change hands between the ranks' private stores.
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "core/exec/reference/mailbox.hpp"
#include "core/exec/reference/transport.hpp"

namespace zb::reference {

// The inboxes of all ranks of one run. Outlives every InProcessTransport that refers to it.
class InProcessFabric {
 public:
  explicit InProcessFabric(int ranks);
  [[nodiscard]] int size() const { return static_cast<int>(inboxes_.size()); }

 private:
  friend class InProcessTransport;
  struct Inbox {
    std::mutex mutex;
    std::condition_variable arrived;
    Mailbox mailbox;
    std::uint64_t arrivals = 0;  // counts puts, so a waiter can tell "something new came"
  };
  std::vector<std::unique_ptr<Inbox>> inboxes_;
};

class InProcessTransport final : public Transport {
 public:
  InProcessTransport(InProcessFabric& fabric, int rank);

  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int size() const override { return fabric_.size(); }
  [[nodiscard]] std::string name() const override { return "threads"; }

  void send(int dst, Tag tag, Bytes payload) override;
  [[nodiscard]] std::optional<Bytes> try_recv(int src, Tag tag) override;
  [[nodiscard]] std::optional<Envelope> try_recv_kind(MessageKind kind) override;
  bool wait_for_message(std::chrono::milliseconds timeout) override;

 private:
  InProcessFabric::Inbox& own_inbox() { return *fabric_.inboxes_[static_cast<std::size_t>(rank_)]; }

  InProcessFabric& fabric_;
  int rank_;
  std::uint64_t seen_arrivals_ = 0;
};

}  // namespace zb::reference
