#pragma once
// One rank's communication on the GPU: a receive buffer for every message a leg of which arrives here
// (its final destination or a proxy), sized by the message, so no recv ever overwrites rows another
// instruction still reads; one send staging buffer for the rank's own rows (pseudo-random, read-only,
// so concurrent sends may share it); per collective instruction its receive buffer. A relay or ring
// forward sends from the buffer it received (its message's own, or the one it `reads`). Collectives:
// all_gather, reduce_scatter and all_reduce are NCCL collectives on the communicator of their members;
// all_to_all (bytes / (P − 1) to each other member) and all_to_all_v (its messages) are grouped
// ncclSend / ncclRecv on the world communicator, as NCCL's own all-to-all is. A step of routed legs
// between the same local rank on two nodes goes on the rank's rail communicator (nccl_order.hpp).
//
// In the correctness pass (a VerifyLayout given) messages carry real rows (verify_layout.hpp): receive
// buffers are sized by the payload, each leg moves its payload fragment, and a send reads the received
// buffer it forwards or the payload this rank wrote before the pass (write_payloads).
#include <vector>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "core/exec/cuda/cuda_world.hpp"
#include "core/exec/cuda/device_arena.hpp"
#include "core/exec/cuda/nccl_order.hpp"
#include "core/exec/cuda/verify_layout.hpp"
#include "core/exec/reference/qkv_generator.hpp"
#include "core/lower/program.hpp"

namespace zb::cuda {

class RankComm {
 public:
  // Reserves the buffers and makes the collectives' communicators and, on more than one node, the rail:
  // every rank of the world constructs one for the same program at the same time (ncclCommSplit is
  // collective over the world).
  // `verify`: the correctness pass's layout of this rank (kept by the caller), with the model's dims.
  RankComm(const lower::Program& program, int rank, CudaWorld& world, DeviceArena& arena,
           const VerifyLayout* verify = nullptr, const AttentionDims& dims = {});

  // Correctness pass: writes the payloads this rank generates (synchronous; after the arena is
  // allocated, before the pass).
  void write_payloads(const reference::QkvGenerator& generator) const;
  // The buffer of a message received here (its final destination or a relay); exit 3 when there is none.
  [[nodiscard]] const void* received(int message) const;

  // Enqueues the rank's share of one comm step on `stream`: one ncclGroupStart / ncclGroupEnd around
  // its calls (in the step's order, the one both ends of every pair use). Exit 3 naming the instruction
  // and the NCCL call when one fails.
  void issue(const IssueItem& item, cudaStream_t stream) const;

 private:
  void issue_collective(const NcclCall& call, cudaStream_t stream) const;
  [[nodiscard]] const void* send_source(int id) const;
  // The bytes a leg moves, within its message's buffer: its modelled fragment, or in the correctness pass
  // the payload fragment.
  [[nodiscard]] lower::ByteRange leg_bytes(const lower::Instr& leg) const;
  [[nodiscard]] std::int64_t message_bytes(int message) const;
  [[nodiscard]] std::string where(int id) const;

  const lower::Program& program_;
  int rank_;
  CudaWorld& world_;
  const DeviceArena& arena_;
  const VerifyLayout* verify_;
  AttentionDims dims_;
  std::size_t staging_ = 0;
  std::vector<std::size_t> generated_;  // [message] → offset of the payload written here (correctness pass)
  std::vector<std::size_t> received_;   // [message] → offset, or npos when not received here
  std::vector<std::size_t> collective_out_;  // [collective] → offset of this member's receive buffer
  std::vector<ncclComm_t> communicators_;    // [collective] → its members' communicator (NCCL collectives)
  ncclComm_t rail_ = nullptr;                // this rank's rail (more than one node)
};

}  // namespace zb::cuda
