#include "core/exec/reference/mpi_abort.hpp"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

namespace zb::reference {
namespace {

std::string rank_names(const std::vector<int>& ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size(); ++i) text += (i == 0 ? "" : ", ") + std::to_string(ranks[i]);
  return text;
}

}  // namespace

std::vector<int> silent_ranks(Transport& transport, std::chrono::milliseconds grace) {
  // Pongs that came after an earlier round's deadline would count a rank that stopped since as alive.
  while (transport.try_recv_kind(MessageKind::pong)) {
  }
  for (int r = 0; r < transport.size(); ++r)
    if (r != transport.rank()) transport.send(r, Tag::make(MessageKind::ping, 0), {});
  std::set<int> answered;
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (static_cast<int>(answered.size()) < transport.size() - 1) {
    while (std::optional<Envelope> m = transport.try_recv_kind(MessageKind::pong)) answered.insert(m->src);
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (static_cast<int>(answered.size()) == transport.size() - 1 || left.count() <= 0) break;
    transport.wait_for_message(left);
  }
  std::vector<int> silent;
  for (int r = 0; r < transport.size(); ++r)
    if (r != transport.rank() && !answered.contains(r)) silent.push_back(r);
  return silent;
}

void end_job_after_timeout(Transport& transport, const WaitTimedOut& timed_out,
                           std::chrono::milliseconds grace) {
  const auto* known = dynamic_cast<const RankSilent*>(&timed_out);
  const std::vector<int> silent = known != nullptr ? known->silent() : silent_ranks(transport, grace);
  std::vector<Problem> problems = timed_out.problems();
  if (!problems.empty()) {
    Problem& first = problems.front();
    if (!silent.empty()) {
      // The wait's own hint would name program faults; with a rank that stopped they are not the cause.
      first.hint =
          rank_names(silent) + " did not answer within " + std::to_string(grace.count()) +
          " ms: stopped (hung, suspended, or busy longer than ZB_REF_TIMEOUT_S), which is not a fault of "
          "the plan; ending the MPI job";
    } else {
      first.hint += "; every rank still answers, so none has stopped: ending the MPI job";
    }
  }
  for (const Problem& p : problems) std::fprintf(stderr, "error: %s\n", p.str().c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, static_cast<int>(ExitCode::runtime));
  std::_Exit(
      static_cast<int>(ExitCode::runtime));  // MPI_Abort does not return; should it, still end this rank
}

}  // namespace zb::reference
