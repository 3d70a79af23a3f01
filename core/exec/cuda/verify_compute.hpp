#pragma once
// The correctness pass's compute (docs/CUDA_BACKEND.md, "Correctness pass"): every attention instruction
// with work gets its own operands (Q, K, V, O, LSE, and for the backward dO, dQ, dK, dV) so that all of
// them can be read back after the pass. Before the pass the rank's own rows are written into them
// (verify_oracle.hpp: host_operands); inside the pass, on the compute stream and after the recvs the
// instruction depends on, each run of K/V rows that a message brought is copied from that message's
// receive buffer (cudaMemcpyAsync, device to device), the gradients are zeroed, and the kernel runs: the
// rows it computes on are the ones NCCL delivered. GEMMs do not run in this pass (their operands carry
// no rows; the timed pass times them). After the pass, check() reads every output back and compares it
// with the float64 oracle.
#include <memory>
#include <vector>

#include "core/exec/cuda/compute_launcher.hpp"
#include "core/exec/cuda/cuda_options.hpp"
#include "core/exec/cuda/device_arena.hpp"
#include "core/exec/cuda/rank_comm.hpp"
#include "core/exec/cuda/verify_layout.hpp"
#include "core/exec/cuda/verify_oracle.hpp"

namespace zb::cuda {

class VerifyCompute final : public ComputeLauncher {
 public:
  // Builds every attention instruction's kernel plan and reserves its operands. `layout` and `comm`
  // must outlive it. Exit 2 for a backward with the own kernels (as RankCompute).
  VerifyCompute(const lower::Program& program, int rank, AttentionKernel kernel, const VerifyLayout& layout,
                const RankComm& comm, DeviceArena& arena);
  ~VerifyCompute() override;
  VerifyCompute(const VerifyCompute&) = delete;
  VerifyCompute& operator=(const VerifyCompute&) = delete;

  // Writes the rank's own rows (and the backward's saved activations and dO) into the operands:
  // synchronous copies, after the arena is allocated and before the pass.
  void write_inputs(const QkvGenerator& generator);
  void launch(int id, cudaStream_t stream) const override;
  // After the pass, with the device idle: every instruction's outputs against the oracle, list order.
  [[nodiscard]] std::vector<InstrCheck> check(const QkvGenerator& generator) const;

 private:
  struct Instruction;
  const lower::Program& program_;
  int rank_;
  AttentionKernel kernel_;
  const RankComm& comm_;
  const DeviceArena& arena_;
  std::vector<std::unique_ptr<Instruction>> instructions_;  // parallel to the layout's attention list
  std::vector<int> index_of_;                               // [instr] → index into instructions_, or −1
  std::size_t workspace_ = 0;                               // cuDNN's, shared (one instruction at a time)
};

}  // namespace zb::cuda
