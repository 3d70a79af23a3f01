#pragma once
// The MPI transport: one process per rank, MPI_COMM_WORLD rank = plan rank. Built only when
// ZEPPELIN_HAVE_MPI. Every message travels as one MPI message with a fixed MPI tag whose first 8 bytes are
// the transport Tag; the receiver drains whatever arrived into a local Mailbox, so matching by
// (source, tag), "any transfer leg" and the 2^31 tag limit of MPI are all handled on this side.
// Sends are MPI_Isend with the buffer kept until MPI reports completion, so they never block.
#include <list>
#include <memory>

#include "core/exec/reference/mailbox.hpp"
#include "core/exec/reference/transport.hpp"

namespace zb::reference {

// The process's MPI session: initialised on first use (MPI_THREAD_FUNNELED: only the thread that runs
// the executor calls MPI), finalised when the process exits. MPI can be initialised once per process,
// so this is the one process-wide object of the executor; it never changes after construction.
class MpiWorld {
 public:
  static const MpiWorld& get();
  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] int size() const { return size_; }
  ~MpiWorld();
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;

 private:
  MpiWorld();
  int rank_ = 0;
  int size_ = 1;
  bool initialised_here_ = false;
};

class MpiTransport final : public Transport {
 public:
  explicit MpiTransport(const MpiWorld& world);
  ~MpiTransport() override;  // waits for sends still in flight (cancels them after a failed run)
  MpiTransport(const MpiTransport&) = delete;
  MpiTransport& operator=(const MpiTransport&) = delete;

  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int size() const override { return size_; }
  [[nodiscard]] std::string name() const override { return "MPI"; }

  void send(int dst, Tag tag, Bytes payload) override;
  [[nodiscard]] std::optional<Bytes> try_recv(int src, Tag tag) override;
  [[nodiscard]] std::optional<Envelope> try_recv_kind(MessageKind kind) override;
  bool wait_for_message(std::chrono::milliseconds timeout) override;
  // As long as `src` answers pings (a rank computing its record answers them: mpi_run.cpp computes on a
  // worker thread while this one polls), up to record_wait_cap; a silent `src` throws RankSilent.
  Bytes recv_record(int src, Tag tag, std::chrono::milliseconds check_every) override;

  // After a failed run the peers may never receive what is in flight: give the sends `grace` to
  // complete (the abort notices among them should arrive), then cancel the rest on close.
  void abandon_pending_sends(std::chrono::milliseconds grace) override;

 private:
  // Moves every message MPI has for this rank into the mailbox and retires completed sends; returns
  // how many messages arrived.
  int progress();
  // Starts one MPI_Isend of tag + payload; send() is this plus progress(), which answers pings with it.
  void post(int dst, Tag tag, const Bytes& payload);

  // Messages drained since the last wait_for_message, including those a try_recv drained: the caller
  // may not have looked at them yet, so the next wait must return at once.
  int arrived_since_wait_ = 0;

  struct PendingSend;
  int rank_;
  int size_;
  Mailbox mailbox_;
  std::list<std::unique_ptr<PendingSend>> pending_;
  bool abandon_ = false;
};

}  // namespace zb::reference
