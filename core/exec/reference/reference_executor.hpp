#pragma once
// The `reference` backend: runs a lowered Program on real numbers on the CPU and proves its plan correct
// (docs/REFERENCE.md). Each rank runs only its own instructions of the Program (RankRunner) over a
// Transport: one thread per rank in this process, or one process per rank under mpirun. What moves
// where, relays, pairings and buffer lifetimes are the Program's; nothing here re-derives them.
// Both passes: the forward instructions, and when the Program has a backward pass (trace.backward =
// true) a layer barrier and the backward ones. After the layer every rank checks its output rows, and
// after the backward its dQ, dK and dV rows, against float64 references; the Trace carries wall-clock
// events of both passes and the two verdicts in model_note, and a failed check is a zb::Error with exit
// code 3 naming the rank, the tensor, the sequence and the first wrong token.
#include "core/exec/executor.hpp"
#include "core/exec/reference/rank_runner.hpp"
#include "core/exec/reference/reference_options.hpp"
#include "core/exec/reference/transport.hpp"

namespace zb::reference {

class ReferenceExecutor final : public Executor {
 public:
  explicit ReferenceExecutor(ReferenceOptions options = {});
  ~ReferenceExecutor() override;
  [[nodiscard]] std::string backend() const override { return "reference"; }
  // One layer: the program's forward instructions, then its backward ones when it has them.
  [[nodiscard]] Trace run(const lower::Program& program, const ExecContext& context) override;
  // It moves every message's rows and checks them against the single-device oracle.
  [[nodiscard]] bool reads_rows() const override { return true; }

  // The per-rank results of the last run (verification figures, checksums), for tests.
  [[nodiscard]] const std::vector<RankResult>& last_results() const { return last_results_; }

 private:
  ReferenceOptions options_;
  std::vector<RankResult> last_results_;
  std::unique_ptr<Transport> mpi_transport_;  // created by the first MPI run, kept for the next ones
};

// Exit 2 (bad input) naming the scenario and the figure when the plan's batch is above the options'
// max_tokens or max_sum_squares: the backend would run out of memory or take hours, not fail clearly.
void check_batch_size(const std::vector<layout::Sequence>& sequences, const std::string& scenario,
                      const ReferenceOptions& options);

// The transport a run will use, after checking the launcher: exit 2 when a multi-process launch cannot
// be honoured (no MPI in this build, or an MPI world of one), or when the MPI world size is not the
// plan's world size (both numbers in the message).
[[nodiscard]] TransportChoice resolve_transport(TransportChoice wanted, int plan_world_size);

}  // namespace zb::reference
