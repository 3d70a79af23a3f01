#pragma once
// The host side of the cuda backend's correctness pass: the values written before the pass (message
// payloads and the rows of packed operands that are the rank's own, from the deterministic generator of
// the reference backend, rounded to bf16 as the GPU stores them) and the float64 oracle each attention
// instruction's outputs are compared with, element by element, with the bf16 tolerances of the GPU
// kernel checks (docs/KERNELS.md, kernels/gpucheck).
//
// What one instruction is checked against: the kernels' own semantics (kernels/attention.hpp and
// attention_backward.hpp) over its packed blocks, in float64, with Q, K and V taken from the generator
// for the rows the plan says the blocks see, NOT from what was copied into the operand: K/V rows that a
// message brought wrong, late or from the wrong rank make the output differ. The forward is the
// instruction's partial O and LSE; the backward starts from the rows' final forward O and LSE over their
// whole causal prefix (float64, written into the operand before the pass, as the saved activations) and
// dO from the generator, and gives the instruction's partial dQ, dK and dV. Merges of partials across
// instructions, the dK/dV accumulators and the remaps of O and of gradients are the reference backend's
// checks (docs/REFERENCE.md); this pass checks what runs on the GPU and what NCCL delivered to it.
#include <cstdint>
#include <string>
#include <vector>

#include "core/exec/cuda/verify_layout.hpp"
#include "core/exec/reference/qkv_generator.hpp"

namespace zb::cuda {

using reference::QkvGenerator;

// A message's payload as the sender writes it (bf16 bits): Q, K, V and dO rows from the generator, other
// rows zero (no check reads them).
[[nodiscard]] std::vector<std::uint16_t> generated_payload(const lower::Message& message,
                                                           const AttentionDims& dims,
                                                           const QkvGenerator& generator);

// What is written into an instruction's operands before the pass (bf16 bits, LSE float). K and V rows
// of runs from messages are zero here: the pass copies them from the received buffers.
struct HostOperands {
  std::vector<std::uint16_t> q, k, v;
  std::vector<std::uint16_t> o, d_o;  // backward only: the rows' final forward O, and dO
  std::vector<float> lse;             // backward only: the rows' final forward LSE
};
[[nodiscard]] HostOperands host_operands(const AttentionOperands& operands, const QkvGenerator& generator);

// What the pass produced, read back after it: forward O (bf16) and LSE; backward dQ, dK, dV (bf16).
struct DeviceResults {
  std::vector<std::uint16_t> o;
  std::vector<float> lse;
  std::vector<std::uint16_t> dq, dk, dv;
};

struct InstrCheck {
  double worst_ratio = 0;     // max over elements of |gpu − ref| / bound (≤ 1 passes)
  std::int64_t elements = 0;  // elements compared
  std::string failure;        // the first tensor out of tolerance, naming the element; empty when all pass
};

// `cudnn`: the tolerances of cuDNN's SDPA (else those of the own kernels). `where` names the
// instruction in the failure.
[[nodiscard]] InstrCheck check_attention(const AttentionOperands& operands, const HostOperands& written,
                                         const DeviceResults& results, const QkvGenerator& generator,
                                         bool cudnn, const std::string& where);

}  // namespace zb::cuda

namespace zb::cuda {

// One rank's checks, summed: what it sends the others (as text, `encode`) so that every rank can say
// the same verdict.
struct RankChecks {
  int instructions = 0;
  std::int64_t elements = 0;
  double worst_ratio = 0;
  std::string failure;  // the rank's first failure, empty when all passed
  [[nodiscard]] std::vector<char> encode() const;
  [[nodiscard]] static RankChecks decode(const std::vector<char>& bytes);
};
[[nodiscard]] RankChecks sum_checks(const std::vector<InstrCheck>& checks);

// The verdict over every rank: "verified on the GPU: …" with the counts and the worst error relative to
// its tolerance, or, when a rank failed, throws zb::Error (runtime, exit 3) naming each failing rank's
// first element out of tolerance.
[[nodiscard]] std::string verdict(const std::vector<RankChecks>& ranks, bool backward);

}  // namespace zb::cuda
