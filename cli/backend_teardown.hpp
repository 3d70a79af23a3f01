#pragma once
// Ends what the backends set up for the process (the cuda backend's NCCL communicators, MPI) while main
// still runs, on every way out of a command that may drive GPUs (run, qualify, calibrate): finish() on
// success, where a failed teardown is exit 3 (the results are written, but the GPU's state at the end is
// not known to be clean); the destructor on an error, where the error in flight is the one to report and
// teardown problems are printed as warnings.
#include <cstdio>
#include <string>
#include <vector>

#include "core/common/error.hpp"
#include "core/exec/executor.hpp"
#include "reports/terminal_text.hpp"

namespace zb::cli {

class BackendTeardown {
 public:
  BackendTeardown() = default;
  BackendTeardown(const BackendTeardown&) = delete;
  BackendTeardown& operator=(const BackendTeardown&) = delete;
  ~BackendTeardown() {
    if (done_) return;
    for (const std::string& problem : shut_down_backends(true))
      std::fprintf(stderr, "warning: %s\n", reports::terminal_field(problem).c_str());
  }
  void finish() {
    done_ = true;
    std::vector<std::string> problems = shut_down_backends(false);
    if (problems.empty()) return;
    std::string what = "ending the backend after the command failed: " + problems.front();
    for (std::size_t i = 1; i < problems.size(); ++i) what += "; " + problems[i];
    throw Error(ExitCode::runtime, Location{}, what,
                "the results were written before; NCCL_DEBUG=WARN says more about NCCL's teardown");
  }

 private:
  bool done_ = false;
};

}  // namespace zb::cli
