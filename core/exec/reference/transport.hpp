#pragma once
// Transport: tagged byte messages between the ranks of one reference run. Sends are buffered (they
// return at once and never wait for the receiver), so a ring where every rank sends before it receives
// cannot deadlock; receives match on (source, tag) in arrival order. Two implementations: in-process
// (one thread per rank, in_process_transport.hpp) and MPI (one process per rank, mpi_transport.hpp).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/common/error.hpp"

namespace zb::reference {

using Bytes = std::vector<std::byte>;

// What a message is for. The kind sits in the tag's top byte so that a rank can take "any transfer leg"
// as it arrives, without knowing its source or key, and report at once one that none of its
// instructions expects.
enum class MessageKind : std::uint8_t {
  transfer = 1,    // one leg of a Program message (direct, first, relay or last leg): id = the leg's key
  collective = 3,  // one message of an all_to_all_v collective: id = the collective's index
  finished = 4,    // "my instructions are done"; a rank checks for strays once every rank has said it
  result = 5,      // a rank's verification record and trace events, the program fingerprint (MPI only)
  abort = 6,       // "I failed": payload is the reason; the receiver stops waiting at once
  pass_done = 7,   // "my forward instructions are done": the layer barrier before the backward pass
  // MPI only: a rank that timed out asks every rank whether it still runs. The transport answers a ping
  // with a pong whenever it polls, so a rank that never answers has stopped (mpi_abort.hpp).
  ping = 8,
  pong = 9,
  // "everything I received for my instructions has arrived": the barrier after `finished` that a run
  // sampling NIC counters waits for, so the counters stop once no transfer of the layer is in flight.
  drained = 10,
  // "I stopped waiting (a stall)": sent in one process, where a stall does not stop the other ranks
  // (rank_runner.hpp, RankStalled). Only Transport::recv stops on it, the executor's own waits after
  // the last barrier: a rank that passed the barrier would otherwise wait hours for the row statistics
  // or results of a rank that gave up inside it.
  stalled = 11,
};

struct Tag {
  std::uint64_t value = 0;
  static Tag make(MessageKind kind, std::uint64_t id) {
    return Tag{(static_cast<std::uint64_t>(kind) << 56) | (id & ((std::uint64_t{1} << 56) - 1))};
  }
  [[nodiscard]] MessageKind kind() const { return static_cast<MessageKind>(value >> 56); }
  [[nodiscard]] std::uint64_t id() const { return value & ((std::uint64_t{1} << 56) - 1); }
  auto operator<=>(const Tag&) const = default;
};

// What a transport delivers: a payload with its sender and tag (lower::Message is the Program's message,
// which a send or recv instruction carries as one or more Envelopes).
struct Envelope {
  int src = -1;
  Tag tag;
  Bytes payload;
};

[[nodiscard]] std::string describe(Tag tag);  // "transfer key 17", "collective 3 message", for error messages

// A rank waited its timeout and nothing came (Transport::recv, and RankStalled in a rank's run). Under
// MPI it ends the whole job (mpi_abort.hpp): the rank it waits for may have stopped, and would never
// reach MPI_Finalize.
class WaitTimedOut : public Error {
 public:
  using Error::Error;
};

// Raised on a rank that stopped because another rank failed (or, in Transport::recv, gave up waiting):
// the executor reports the other rank's error, which says what went wrong, rather than this one.
class PeerFailed : public Error {
 public:
  using Error::Error;
};

class Transport {
 public:
  virtual ~Transport() = default;
  [[nodiscard]] virtual int rank() const = 0;
  [[nodiscard]] virtual int size() const = 0;
  // "threads" or "MPI", for the trace's model note.
  [[nodiscard]] virtual std::string name() const = 0;

  // Buffered: returns at once; the payload is delivered to `dst` even if it never receives it.
  virtual void send(int dst, Tag tag, Bytes payload) = 0;
  // The oldest message from `src` with `tag`, if one has arrived.
  [[nodiscard]] virtual std::optional<Bytes> try_recv(int src, Tag tag) = 0;
  // The oldest message of `kind` from any source (smallest tag first, then source), if any.
  [[nodiscard]] virtual std::optional<Envelope> try_recv_kind(MessageKind kind) = 0;
  // Blocks until a message arrived since the previous call, or `timeout` passed (returns false).
  virtual bool wait_for_message(std::chrono::milliseconds timeout) = 0;

  // After a failed run: give sends still in flight `grace` to complete (abort notices among them
  // should arrive), then stop waiting for the rest. Sends of the in-process transport are never in flight.
  virtual void abandon_pending_sends(std::chrono::milliseconds grace) { (void)grace; }

  // Blocking receive with a deadline: throws WaitTimedOut naming this rank, `src` and the tag, or
  // PeerFailed with the reason another rank gave when it aborted the run or stalled.
  Bytes recv(int src, Tag tag, std::chrono::milliseconds timeout);

  // The receive of a record a rank sends after computing for as long as it takes (its row statistics,
  // its verification result), after every rank finished its instructions. In one process every rank is
  // a thread of this one, so the wait is only capped (record_wait_cap); under MPI (mpi_transport.cpp) a
  // rank that stopped answering pings, checked every `check_every`, ends it with WaitTimedOut naming that
  // rank, within about two `check_every`, as a stall in the layer does.
  virtual Bytes recv_record(int src, Tag tag, std::chrono::milliseconds check_every) {
    (void)check_every;
    return recv(src, tag, record_wait_cap);
  }
  static constexpr std::chrono::milliseconds record_wait_cap = std::chrono::hours(2);
};

}  // namespace zb::reference
