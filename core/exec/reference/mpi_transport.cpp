#include "core/exec/reference/mpi_transport.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <thread>

#include "core/exec/reference/mpi_abort.hpp"
#include "core/exec/reference/rank_location.hpp"

namespace zb::reference {
namespace {

constexpr int kWireTag = 7;  // every transport message uses this MPI tag; the real tag is in the payload

void check(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error(ExitCode::runtime, Location{},
              std::string(call) + " failed: " + std::string(text, static_cast<std::size_t>(length)));
}

}  // namespace

MpiWorld::MpiWorld() {
  int already = 0;
  MPI_Initialized(&already);
  if (!already) {
    int provided = 0;
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    initialised_here_ = true;
  }
  // Errors come back as codes so that they become zb::Error with a message, not an MPI abort.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiWorld::~MpiWorld() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (initialised_here_ && !finalized) MPI_Finalize();
}

const MpiWorld& MpiWorld::get() {
  static const MpiWorld world;  // MPI_Init once per process; MPI_Finalize at exit
  return world;
}

struct MpiTransport::PendingSend {
  Bytes wire;
  MPI_Request request = MPI_REQUEST_NULL;
};

MpiTransport::MpiTransport(const MpiWorld& world) : rank_(world.rank()), size_(world.size()) {}

MpiTransport::~MpiTransport() {
  for (auto& pending : pending_) {
    if (abandon_) {
      MPI_Cancel(&pending->request);
      MPI_Request_free(&pending->request);
    } else {
      MPI_Wait(&pending->request, MPI_STATUS_IGNORE);
    }
  }
}

void MpiTransport::abandon_pending_sends(std::chrono::milliseconds grace) {
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (!pending_.empty() && std::chrono::steady_clock::now() < deadline) {
    progress();
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  abandon_ = true;
}

void MpiTransport::send(int dst, Tag tag, Bytes payload) {
  post(dst, tag, payload);
  progress();
}

void MpiTransport::post(int dst, Tag tag, const Bytes& payload) {
  if (dst < 0 || dst >= size_) {
    throw Error(ExitCode::runtime, rank_location(rank_),
                "send of " + describe(tag) + " to rank " + std::to_string(dst) +
                    ", which is not in the MPI world of " + std::to_string(size_) + " processes");
  }
  auto pending = std::make_unique<PendingSend>();
  pending->wire.resize(sizeof(std::uint64_t) + payload.size());
  std::memcpy(pending->wire.data(), &tag.value, sizeof(std::uint64_t));
  if (!payload.empty())
    std::memcpy(pending->wire.data() + sizeof(std::uint64_t), payload.data(), payload.size());
  check(MPI_Isend(pending->wire.data(), static_cast<int>(pending->wire.size()), MPI_BYTE, dst, kWireTag,
                  MPI_COMM_WORLD, &pending->request),
        "MPI_Isend");
  pending_.push_back(std::move(pending));
}

int MpiTransport::progress() {
  for (auto it = pending_.begin(); it != pending_.end();) {
    int done = 0;
    check(MPI_Test(&(*it)->request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    it = done ? pending_.erase(it) : std::next(it);
  }
  int arrived = 0;
  for (;;) {
    int flag = 0;
    MPI_Status status;
    check(MPI_Iprobe(MPI_ANY_SOURCE, kWireTag, MPI_COMM_WORLD, &flag, &status), "MPI_Iprobe");
    if (!flag) break;
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    Bytes wire(static_cast<std::size_t>(count));
    check(MPI_Recv(wire.data(), count, MPI_BYTE, status.MPI_SOURCE, kWireTag, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE),
          "MPI_Recv");
    if (wire.size() < sizeof(std::uint64_t)) {
      throw Error(ExitCode::runtime, rank_location(rank_),
                  "a message of " + std::to_string(count) + " bytes from rank " +
                      std::to_string(status.MPI_SOURCE) + " has no transport header");
    }
    Envelope message;
    message.src = status.MPI_SOURCE;
    std::memcpy(&message.tag.value, wire.data(), sizeof(std::uint64_t));
    message.payload.assign(wire.begin() + sizeof(std::uint64_t), wire.end());
    // Answered here rather than by the rank's own code, so that a rank answers wherever it waits
    // (instructions, barriers, result exchange): only a rank that stopped polling stays silent.
    if (message.tag.kind() == MessageKind::ping) {
      post(message.src, Tag::make(MessageKind::pong, 0), {});
      continue;
    }
    mailbox_.put(std::move(message));
    ++arrived;
    ++arrived_since_wait_;
  }
  return arrived;
}

std::optional<Bytes> MpiTransport::try_recv(int src, Tag tag) {
  progress();
  return mailbox_.take(src, tag);
}

std::optional<Envelope> MpiTransport::try_recv_kind(MessageKind kind) {
  progress();
  return mailbox_.take_kind(kind);
}

bool MpiTransport::wait_for_message(std::chrono::milliseconds timeout) {
  // MPI has no "wait for any message" with a timeout: poll, backing off to 1 ms so an idle rank stays cheap.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto nap = std::chrono::microseconds(20);
  for (;;) {
    progress();
    if (arrived_since_wait_ > 0) {
      arrived_since_wait_ = 0;
      return true;
    }
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, std::chrono::microseconds(1000));
  }
}

Bytes MpiTransport::recv_record(int src, Tag tag, std::chrono::milliseconds check_every) {
  const auto give_up = std::chrono::steady_clock::now() + record_wait_cap;
  for (;;) {
    try {
      return recv(src, tag, check_every);
    } catch (const WaitTimedOut&) {
      // Nothing for a while: `src` may still be computing (it answers pings meanwhile) or have stopped.
      std::vector<int> silent = silent_ranks(*this, check_every);
      const bool stopped = std::find(silent.begin(), silent.end(), src) != silent.end();
      const bool too_long = std::chrono::steady_clock::now() >= give_up;
      if (!stopped && !too_long) continue;
      throw RankSilent(rank_location(rank_),
                       "waited for " + describe(tag) + " from rank " + std::to_string(src) +
                           (stopped ? ", which stopped answering after it finished its instructions"
                                    : ", which still computes after the 2-hour cap"),
                       std::move(silent));
    }
  }
}

}  // namespace zb::reference
