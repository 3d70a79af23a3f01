#pragma once
// What the pass runner asks of a rank's compute: enqueue one compute instruction on the compute stream
// (asynchronous, no allocation, no synchronisation). The timed pass's RankCompute (scratch operands
// shared by every instruction) and the correctness pass's VerifyCompute (each instruction its own
// operands, K/V copied from the received buffers) both answer it.
#include <cuda_runtime_api.h>

namespace zb::cuda {

class ComputeLauncher {
 public:
  virtual ~ComputeLauncher() = default;
  virtual void launch(int id, cudaStream_t stream) const = 0;
};

}  // namespace zb::cuda
