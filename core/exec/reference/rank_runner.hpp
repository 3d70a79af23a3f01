#pragma once
// RankRunner: one rank of a reference run. It executes ONLY its own op list, like a GPU would:
//   * compute ops (attention, GEMM) run one at a time in list order — the compute stream — as soon as
//     their deps are done, so partial results merge in a fixed order;
//   * communication ops (send, recv, remap) progress as soon as their deps allow, in any order — the
//     communication streams — so a recv listed before a compute op never blocks it needlessly;
//   * between ops it serves the relay station (routed pieces it forwards for others);
//   * when idle it sleeps until a message arrives; nothing arriving for the receive timeout is an error
//     that lists what the rank was waiting for, so a wrong plan never hangs.
// Direct KV messages are taken as soon as they arrive: one that no recv op of this rank expects is
// reported at once (a send to the wrong peer), instead of after a timeout on the starved receiver.
// After its ops it tells every rank it is done and keeps relaying until all are, then checks that no
// message was left unreceived, and verifies its outputs.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/exec/reference/parcel_lifetimes.hpp"
#include "core/exec/reference/rank_location.hpp"
#include "core/exec/reference/rank_state.hpp"
#include "core/exec/reference/relay_station.hpp"
#include "core/exec/reference/remap_exchange.hpp"
#include "core/exec/reference/transport.hpp"
#include "core/exec/reference/verification.hpp"

namespace zb::reference {

struct RankResult {
  int rank = 0;
  std::vector<TraceEvent> events;
  RankVerification verification;
};

// Raised on a rank that stopped because another rank failed: the executor reports the other rank's
// error, which says what went wrong, rather than this one.
class PeerFailed : public Error {
 public:
  using Error::Error;
};

// Raised on a rank that waited the receive timeout with nothing arriving. It does NOT stop the other
// ranks: when a plan is stuck every rank stalls within about one timeout, and only the full picture
// shows which wait is the cause (a rank waiting for one that already finished its ops).
class RankStalled : public Error {
 public:
  RankStalled(int rank, std::string what, std::vector<int> awaited, bool finished_own_ops)
      : Error(ExitCode::runtime, rank_location(rank), std::move(what),
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
  RankRunner(const RunInputs& inputs, int rank, Transport& transport);
  // Runs the layer and the check. Throws zb::Error (runtime) on a broken plan or a failed transfer.
  RankResult run();

 private:
  enum class OpStatus : unsigned char { waiting, started, done };
  struct RemapProgress {
    RemapTraffic traffic;
    std::vector<int> waiting;  // peers whose rows have not arrived
    Tag tag;
    std::int64_t bytes = 0;
  };

  bool deps_done(const plan::Op& op) const;
  bool collect_kv_messages();             // true when any arrived
  bool advance_comm(const plan::Op& op);  // true when it made progress
  void run_compute(const plan::Op& op);
  void start_remap(const plan::Op& op);
  void say_finished_and_wait_for_all();
  void check_aborted();
  void check_no_strays();
  [[noreturn]] void stalled() const;

  RankState state_;
  Transport& transport_;
  RelayStation relay_;
  ParcelLifetimes lifetimes_;  // frees parcels once their last reader is done
  std::vector<OpStatus> status_;
  std::vector<double> started_at_;
  std::vector<RemapProgress> remaps_;      // indexed by remap_index_[op]
  std::vector<int> remap_index_;
  std::size_t next_compute_ = 0;           // first compute op not yet run
  std::vector<int> unfinished_peers_;      // in the finishing phase
  std::map<std::pair<int, int>, int> recv_op_of_;  // (peer, plan tag) → this rank's recv op
  std::map<int, Bytes> arrived_;                   // recv op → its direct message, taken early
};

}  // namespace zb::reference
