#pragma once
// The check after the backward pass. Each rank takes the gradient rows it holds in the linear layout
// (after the inverse remaps, so they are checked too): dQ of its query rows, dK and dV of its key rows,
// and compares every element with the float64 reference of gradient_reference.hpp: |x − ref| must stay
// within the element's derived rounding bound (docs/REFERENCE.md, "Backward tolerance"). It reports per
// tensor the normwise relative error (max |x − ref| / max |ref|) and the worst ratio error / bound. A
// gradient row it holds outside its linear layout (a partial that never went home, or one accumulated
// on the wrong rank) is a failure as well.
#include <cstdint>
#include <functional>
#include <string>

#include "core/exec/reference/rank_state.hpp"
#include "core/exec/reference/transport.hpp"

namespace zb::reference {

struct TensorCheck {
  double max_error = 0;      // max |x − ref| over the elements checked
  double max_reference = 0;  // max |ref|
  double worst_ratio = 0;    // max |x − ref| / bound
  std::int64_t rows = 0;     // token rows checked
  [[nodiscard]] double normwise() const { return max_reference > 0 ? max_error / max_reference : max_error; }
  void merge(const TensorCheck& other);
};

struct GradientVerification {
  bool ran = false;  // the Program had a backward pass
  TensorCheck dq, dk, dv;
  std::string failure;         // empty when every element is within its bound and nothing was left over
  std::uint64_t checksum = 0;  // FNV-1a of the dQ, dK, dV rows' bytes, linear layout order
};

// Runs a piece of the verification's bounded compute: on this thread by default; under MPI on a worker
// thread while this one keeps the transport polled (mpi_run.cpp), so the rank answers liveness pings
// and a rank waiting for its records can tell it from one that stopped.
using ComputeRunner = std::function<void(const std::function<void()>& work)>;

// Computes (through `compute`) the float64 row statistics of the rank's linear rows, inserts them into
// the process's gradient reference and, under MPI, sends them to every other rank and inserts theirs
// (Transport::recv_record); then waits until every rank has done so (in one process an empty note says
// it). Call on every rank, after the last barrier and before verify_gradients.
void share_row_statistics(const RankState& state, Transport& transport, const ComputeRunner& compute);

[[nodiscard]] GradientVerification verify_gradients(const RankState& state);

}  // namespace zb::reference
