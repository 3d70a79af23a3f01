#pragma once
// Ending an MPI reference run that timed out (built only with ZEPPELIN_HAVE_MPI). A rank that waited its
// timeout cannot simply fail: the job ends only once every process reaches MPI_Finalize, and a rank
// that stopped (hung, SIGSTOPped, stuck outside the reference) never does, so the others would wait in
// MPI_Finalize forever. Instead the rank asks every other rank whether it still runs, reports what it
// waited for and which ranks did not answer, and ends the whole job with MPI_Abort.
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "core/exec/reference/transport.hpp"

namespace zb::reference {

// Pings every other rank and returns those that did not answer within `grace`. A rank answers whenever
// its transport polls (MpiTransport::progress), which every wait of a running rank does, and so does a
// rank computing its verification (mpi_run.cpp polls while a worker thread computes).
[[nodiscard]] std::vector<int> silent_ranks(Transport& transport, std::chrono::milliseconds grace);

// A wait that already knows which ranks stopped answering (MpiTransport::recv_record pinged them), so
// ending the job need not ping again.
class RankSilent : public WaitTimedOut {
 public:
  RankSilent(Location where, std::string what, std::vector<int> silent)
      : WaitTimedOut(ExitCode::runtime, std::move(where), std::move(what)), silent_(std::move(silent)) {}
  [[nodiscard]] const std::vector<int>& silent() const { return silent_; }

 private:
  std::vector<int> silent_;
};

// Prints `timed_out`'s problems on stderr ("error: …", as the CLI would), saying which ranks stopped
// answering (the cause, not the plan) or that all still run (a stuck program), then MPI_Abort with exit
// code 3 (runtime), so mpirun ends every process of the job.
[[noreturn]] void end_job_after_timeout(Transport& transport, const WaitTimedOut& timed_out,
                                        std::chrono::milliseconds grace);

}  // namespace zb::reference
