// The cuDNN SDPA correctness cases and their tolerances (see sdpa_check.hpp).
#include <string>
#include <utility>

#include "kernels/gpucheck/sdpa_check.hpp"

namespace zb::kernels::gpucheck {

namespace {

using cuda::ElementType;
constexpr AttentionMask kCausal = AttentionMask::causal;
constexpr AttentionMask kFull = AttentionMask::full;

SdpaCase packed_causal(std::string name, int heads, int kv_heads, int head_dim,
                       const std::vector<std::int64_t>& lengths, ElementType type) {
  SdpaCase c{std::move(name), {heads, kv_heads, head_dim, 0, 0, 0}, {}, {}, type};
  std::int64_t row = 0;
  for (std::int64_t length : lengths) {
    c.blocks.push_back({row, length, row, length, 0, 0, kCausal, row});
    row += length;
  }
  c.shape.q_tokens = c.shape.kv_tokens = c.shape.out_rows = row;
  return c;
}

}  // namespace

SdpaTolerances sdpa_tolerances(ElementType type) {
  // bf16 keeps 8 significant bits (relative step 2^-8 ≈ 3.9e-3), fp16 11 (4.9e-4). cuDNN rounds P to the
  // input type before P·V and dS before dQ/dK, and writes O and the gradients in the input type, so a
  // few steps of relative error are expected; the atol part scales with the tensor's magnitude.
  if (type == ElementType::bf16) return {{0, 2e-2, 1e-2}, {2e-3, 1e-3, 0}, {0, 3e-2, 1.5e-2}};
  return {{0, 5e-3, 2.5e-3}, {1e-3, 5e-4, 0}, {0, 1e-2, 5e-3}};
}

std::vector<SdpaCase> sdpa_standard_cases() {
  std::vector<SdpaCase> cases;
  const std::vector<std::int64_t> lengths{1, 77, 300, 129, 64, 200};  // odd lengths, one token
  for (int ratio : {1, 4})
    cases.push_back(packed_causal("packed causal bf16 d128 gqa" + std::to_string(ratio), 8, 8 / ratio, 128,
                                  lengths, ElementType::bf16));
  cases.push_back(packed_causal("packed causal f16 d64 gqa8", 8, 1, 64, {513, 1000}, ElementType::f16));
  cases.push_back(packed_causal("packed causal bf16 d64 4k", 2, 1, 64, {4096}, ElementType::bf16));

  // One 700-token sequence cut like a context-parallel plan (absolute positions): a late query chunk
  // against all earlier keys (bottom-right), keys that start after some queries (leading empty rows,
  // then bottom-right), keys ending before the queries end (bottom-right then full rows), a full block,
  // keys entirely after the queries (empty), and 30 output rows no block writes (must stay poisoned).
  SdpaCase cut{"context-parallel cut bf16 d128 gqa4", {8, 2, 128, 700, 700, 730}, {}, {}, ElementType::bf16};
  cut.blocks = {{500, 200, 0, 700, 500, 0, kCausal, 0},   {0, 100, 0, 100, 0, 0, kCausal, 200},
                {100, 150, 0, 250, 100, 0, kCausal, 300}, {300, 10, 305, 95, 300, 305, kCausal, 450},
                {250, 50, 0, 100, 250, 0, kFull, 460},    {310, 190, 130, 170, 310, 130, kCausal, 510},
                {0, 20, 400, 50, 0, 400, kCausal, 700}};
  cases.push_back(cut);
  SdpaCase cut16 = cut;
  cut16.name = "context-parallel cut f16 d128 gqa4";
  cut16.type = ElementType::f16;
  cases.push_back(cut16);

  // Ring backward over one 1024-token sequence in two query shards: the forward gives each row its final
  // O/LSE over all its keys; the backward runs the ring's steps as separate blocks that share q, kv and
  // out rows, so dQ sums over key chunks and dK/dV over query shards (list-order accumulation).
  SdpaCase ring{"ring backward bf16 d128 gqa2", {4, 2, 128, 1024, 1024, 1024}, {}, {}, ElementType::bf16};
  ring.blocks = {{0, 512, 0, 512, 0, 0, kCausal, 0}, {512, 512, 0, 1024, 512, 0, kCausal, 512}};
  ring.backward_blocks = {{512, 512, 0, 256, 512, 0, kCausal, 512},
                          {512, 512, 256, 256, 512, 256, kCausal, 512},
                          {512, 512, 512, 512, 512, 512, kCausal, 512},
                          {0, 512, 0, 256, 0, 0, kCausal, 0},
                          {0, 512, 256, 256, 0, 256, kCausal, 0}};
  cases.push_back(ring);
  return cases;
}

}  // namespace zb::kernels::gpucheck
