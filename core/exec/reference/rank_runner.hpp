#pragma once
// RankRunner: one rank of a reference run. It executes ONLY its own instructions of the lowered Program
// (program.ranks[rank].instrs), under the execution rules of core/lower/program.hpp, and works out
// nothing the Program already says (pairings, payloads, relays, buffer lifetimes):
//   * both passes: the forward instructions [0, first_backward), then, when the Program has a backward
//     pass, a layer barrier (every rank says its forward is done and waits for all), the seeded output
//     gradient dO on the rows of its linear layout, and the backward instructions;
//   * compute instructions (attention, GEMM) run one at a time in strict list order, each once its deps
//     are done — the compute stream — so partial results merge (forward) and gradients add (backward)
//     in a fixed order;
//   * comm and relay instructions (send, recv, collective) are posted as soon as their deps are done, in
//     any order. A send packs its message's slices (from the rank's own rows or the buffers of the
//     messages it `reads`), cuts its byte fragment and sends it at once (sends are buffered); a relay send
//     forwards the bytes its relay recv got. A recv completes when its leg has arrived; a last-leg recv
//     stores its fragment in the message's buffer, complete once every fragment is in. A collective
//     (all_to_all_v: the remap, forward or its inverse; a K/V all-gather into buffers, its reduce-scatter
//     of dK/dV, kv_collectives.hpp) sends its messages and completes once every message for it arrived;
//     one without messages (opaque) completes once posted;
//   * dK/dV accumulators (Purpose::dkv, gradient_ops.hpp): a send carries the accumulator it reads plus
//     this rank's partial and hands the partial over; a delivery nobody forwards is added into the rank's
//     own gradient rows;
//   * a received buffer is freed once every instruction listing it in `reads` is done;
//   * legs and collective messages are taken from the transport as soon as they arrive (backward ones
//     too, while the rank is still in its forward pass): one that no instruction of this rank expects is
//     reported at once (a send to the wrong peer), not after a timeout on the starved receiver;
//   * when idle it sleeps until a message arrives; nothing arriving for the receive timeout is an error
//     that lists the instructions it waits for (lower::describe), so a wrong program never hangs.
// Before running it checks the promises it relies on (passes and their order, indices, one recv per
// (peer, key), relay sends after their relay recv, an instruction that reads a message depends on every
// recv that delivers it), so a corrupted Program is an error naming the instruction rather than a race.
// After its instructions it tells every rank it is done, waits until all are, checks that no message
// was left unreceived, and verifies its outputs and, after a backward pass, its gradients.
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/exec/reference/gradient_verification.hpp"
#include "core/exec/reference/kv_collectives.hpp"
#include "core/exec/reference/rank_location.hpp"
#include "core/exec/reference/rank_state.hpp"
#include "core/exec/reference/transport.hpp"
#include "core/exec/reference/verification.hpp"

namespace zb::reference {

struct RankResult {
  int rank = 0;
  std::vector<TraceEvent> events;
  RankVerification verification;    // the forward's output rows
  GradientVerification gradients;   // the backward's dQ, dK, dV rows (ran = false for a forward-only Program)
  std::vector<LinkLoad> nic_loads;  // measured runs: this node's NIC loads, on the node's first rank only
};

// Raised on a rank that waited the receive timeout with nothing arriving. In one process it does NOT
// stop the other ranks: when a program is stuck every rank stalls within about one timeout, and only
// the full picture shows which wait is the cause (a rank waiting for one that already finished its
// instructions). Under MPI it ends the job (mpi_abort.hpp), since a stopped rank would never finalize.
class RankStalled : public WaitTimedOut {
 public:
  RankStalled(int rank, std::string what, std::vector<int> awaited, bool finished_own_ops)
      : WaitTimedOut(ExitCode::runtime, rank_location(rank), std::move(what),
                     "a send to the wrong peer, a missing send, or a dependency cycle across ranks"),
        awaited_(std::move(awaited)),
        finished_own_ops_(finished_own_ops) {}
  [[nodiscard]] const std::vector<int>& awaited() const { return awaited_; }
  [[nodiscard]] bool finished_own_ops() const { return finished_own_ops_; }

 private:
  std::vector<int> awaited_;  // the ranks it was waiting for
  bool finished_own_ops_;
};

class RankRunner {
 public:
  // Throws zb::Error (runtime) naming the instruction when the rank's program breaks a promise above.
  RankRunner(const RunInputs& inputs, int rank, Transport& transport);
  // Runs the layer and the check. Throws zb::Error (runtime) on a broken program or a failed transfer.
  RankResult run();
  // Called once every rank has finished its instructions and, when the options sample NICs, once every
  // rank has also received everything (the `drained` barrier): where a NIC sampler stops, before the
  // verification traffic (row statistics) starts.
  void on_layer_done(std::function<void()> hook) { on_layer_done_ = std::move(hook); }
  // How the verification's compute runs (verify_outputs, the row statistics, verify_gradients): on this
  // thread unless set; under MPI, on a worker thread while this one answers pings (mpi_run.cpp).
  void compute_with(ComputeRunner runner) { compute_ = std::move(runner); }

 private:
  enum class Status : unsigned char { waiting, posted, done };
  // One end of a message on this rank (its first legs on the src, its last legs on the dst): one trace
  // event once every fragment of that end is done.
  struct MessageEnd {
    int left = 0;       // first legs on this rank (sends), last legs (recvs)
    double start = -1;  // when the first of them was posted
  };
  struct Outgoing {  // a message this rank sends, packed once, while its first legs are sent
    Bytes payload;
    int left = 0;
  };
  struct Relayed {  // the fragment a relay recv got, until its relay send forwards it
    Bytes bytes;
    double arrived = 0;
  };
  struct CollectiveProgress {
    CollectiveRows rows = CollectiveRows::none;
    std::vector<int> waiting;  // messages for this rank not yet stored
    std::map<int, Bytes>
        partials;  // reduce-scatter, head dQ/dK/dV: received, added once all are in (a fixed order)
    std::int64_t bytes = 0;
  };

  void check_program();                       // rank_program_check.cpp
  void run_instructions(int begin, int end);  // one pass: instructions [begin, end)
  // Tells every other rank `kind` and waits until each has told it the same; `what` names the phase.
  void barrier(MessageKind kind, const std::string& what);
  [[nodiscard]] bool deps_done(int id) const;
  bool collect_arrivals();          // true when anything arrived
  bool advance_comm(int id);        // true when it made progress
  void send_leg(int id);            // rank_transfers.cpp
  bool complete_recv(int id);       // rank_transfers.cpp
  bool advance_collective(int id);  // rank_collectives.cpp
  void start_collective(int id, CollectiveProgress& c);
  void store_collective_message(int id, CollectiveProgress& c, int message, const Bytes& payload);
  void run_compute(int id);  // rank_compute.cpp
  void done(int id);
  void check_aborted();
  [[noreturn]] void fail(int id, const std::string& what) const;
  [[noreturn]] void stalled() const;

  RankState state_;
  Transport& transport_;
  int first_backward_ = 0;  // the rank's first backward instruction
  int count_ = 0;  // instructions it runs: all of them, or [0, first_backward) for a forward-only Program
  std::vector<Status> status_;
  std::vector<double> posted_at_;
  std::size_t next_compute_ = 0;                          // first compute instruction not yet run
  std::map<std::pair<int, std::uint64_t>, int> recv_of_;  // (peer, key) → this rank's recv instruction
  std::map<int, Bytes> arrived_;                          // recv → its leg, taken from the transport early
  std::map<int, Relayed> relayed_;
  std::map<int, Outgoing> outgoing_;                  // message → its packed payload
  std::map<int, MessageEnd> send_ends_, recv_ends_;   // message → its first legs here / its last legs here
  std::map<std::pair<int, int>, int> collective_in_;  // (src, collective) → the message this rank receives
  std::map<int, Bytes> collective_arrived_;           // message → its payload, taken early
  std::set<int> collective_stored_;                   // messages already stored
  std::map<int, CollectiveProgress> collectives_;     // collective instruction → its progress
  std::function<void()> on_layer_done_;
  ComputeRunner compute_ = [](const std::function<void()>& work) { work(); };
  std::vector<int> unfinished_peers_;  // in a barrier: the ranks not yet heard from
};

}  // namespace zb::reference
