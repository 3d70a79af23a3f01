#pragma once
// Where the correctness pass of the cuda backend finds every row its kernels read (docs/CUDA_BACKEND.md,
// "Correctness pass"). The timed pass moves the Program's modelled byte counts between buffers whose
// contents carry no meaning; the correctness pass moves REAL rows, so that an attention kernel that reads
// K/V received over NCCL computes on the rows the plan says it gets, and a wrong route, a swapped buffer
// or a missing hop shows in its output:
//   * a message's payload is its slices' rows in bf16 at the model's dims, slice after slice, row-major
//     (token, head, dim); its legs move the same fraction of that payload as of its modelled bytes (the
//     reference backend's rule: fragments that tile the modelled size tile the payload);
//   * a send forwards the buffer it received of the same rows (a relay leg, a ring forward), otherwise
//     the sender writes the payload from the deterministic generator before the pass;
//   * an attention instruction packs Q, K and V block after block (as the timed pass does); each run of
//     K/V rows comes from the rank's own rows (its linear layout, written before the pass) or from the
//     received buffer of a message that carries them: a remap into this rank's attention layout, then
//     the messages the instruction `reads`, in that order. Those copies run on the compute stream inside
//     the pass, after the recvs the instruction depends on.
// Pure C++ (no CUDA): the layout is derived and tested without a GPU.
#include <cstdint>
#include <string>
#include <vector>

#include "core/exec/reference/qkv_generator.hpp"
#include "core/lower/payload_fragment.hpp"
#include "core/lower/program.hpp"
#include "kernels/attention.hpp"

namespace zb::cuda {

using reference::AttentionDims;

// An attention instruction's plan-op blocks, queries and keys packed block after block.
struct PackedBlocks {
  kernels::AttentionShape shape;
  std::vector<kernels::AttentionBlockDesc> descs;
  std::vector<layout::AttentionBlock> blocks;  // parallel to descs
  bool all_heads = true;                       // every block computes every head (no tensor or head split)
};
// Exit 3 naming the instruction when its plan op is not an attention op of the rank.
[[nodiscard]] PackedBlocks pack_blocks(const lower::Program& program, int rank, int id,
                                       const AttentionDims& model);

// Elements per row of `tensor`: Q, O, dQ, dO heads · head_dim; K, V, dK, dV kv_heads · head_dim; 0 for
// hidden and grad rows (GEMM-side rows this pass has no values for).
[[nodiscard]] std::int64_t row_elements(const AttentionDims& dims, lower::Tensor tensor);

// A message's payload in the correctness pass: bf16 bytes and where each slice starts. A message without
// slices, or with GEMM-side rows, keeps its modelled bytes (its contents are never read by a check).
struct Payload {
  std::int64_t bytes = 0;
  std::vector<std::int64_t> slice_offset;  // parallel to the message's slices
  bool rows = false;                       // the payload is the slices' rows
};
[[nodiscard]] Payload payload_of(const lower::Message& message, const AttentionDims& dims);

// A run of consecutive K or V rows of a packed operand and where they come from.
struct OperandRun {
  int message = -1;  // −1: the rank's own rows, written before the pass; else that message's received buffer
  int seq = 0;
  std::int64_t token = 0;  // first token (position in the sequence)
  std::int64_t rows = 0;
  std::int64_t packed_row = 0;   // first row in the packed operand
  std::int64_t source_byte = 0;  // message: where the first row starts in its payload
};

struct AttentionOperands {
  int instr = -1;
  bool backward = false;
  PackedBlocks packed;
  std::vector<OperandRun> k, v;
};

struct VerifyLayout {
  std::vector<AttentionOperands> attention;  // the rank's attention instructions with work, list order
  // [message] → the message whose received buffer this rank's sends of it forward (itself for a relay,
  // the message read for a ring forward); −1 when this rank writes its payload (first leg from here)
  // or sends none of it.
  std::vector<int> forwards;
  std::vector<int> generated;  // messages whose payload this rank writes before the pass, ascending
  std::string problem;         // a row no source holds: the rank cannot compute what the plan says
};

// Why the correctness pass cannot check this Program, or empty when it can: a head all-to-all, attention
// over a subset of the heads (tensor or head parallelism), or K/V that arrive inside an NCCL all-gather
// (whose shards the pass does not lay out as rows). The same answer on every rank.
[[nodiscard]] std::string verification_blocker(const lower::Program& program, const AttentionDims& dims);

// The multiply-adds of the float64 oracle on the busiest rank: what decides "small enough to verify".
[[nodiscard]] double oracle_work(const lower::Program& program, const AttentionDims& dims);

[[nodiscard]] VerifyLayout derive_verify_layout(const lower::Program& program, int rank,
                                                const AttentionDims& dims);

}  // namespace zb::cuda
