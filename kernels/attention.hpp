#pragma once
// Varlen blockwise attention forward and the LSE merge of partial results: the CPU reference versions.
// The CUDA versions (kernels/cuda_attention.hpp) take the same shapes and descriptors, so an executor
// switches backends without changing how it describes the work.
//
// Layouts (all row-major, "rows" are tokens):
//   Q    q_tokens  × heads    × head_dim      packed: the tokens of many sequences back to back
//   K, V kv_tokens × kv_heads × head_dim      GQA: query head h reads kv head h / (heads / kv_heads)
//   O    out_rows  × heads    × head_dim
//   LSE  out_rows  × heads                    natural log of the softmax denominator of each row
//
// One AttentionBlockDesc is one plan attention block: queries [q_row, q_row + q_count) of packed Q attend
// to keys/values [kv_row, kv_row + kv_count) of packed K/V, and the result goes to rows
// [out_row, out_row + q_count) of O and LSE. The result is PARTIAL: softmax over this block's keys only,
// so blocks that split one sequence's keys are combined with merge_partials. A row that sees no key
// (kv_count == 0, or every key masked) gets O = 0 and LSE = −inf, which merge_partials treats as "empty".
//
// Mask: causal compares ABSOLUTE positions in the sequence, so a block of a sharded sequence needs no
// renumbering: query i (position q_position + i) sees key j (position kv_position + j) iff
// kv_position + j ≤ q_position + i. Full: every key is seen. Scale = 1/sqrt(head_dim).
//
// Output row ranges of different blocks must not overlap (on the GPU they run concurrently).
#include <cstdint>
#include <span>
#include <string_view>

#include "kernels/status.hpp"

namespace zb::kernels {

enum class AttentionMask { causal, full };

struct AttentionShape {
  int heads = 0;
  int kv_heads = 0;  // heads % kv_heads == 0
  int head_dim = 0;
  std::int64_t q_tokens = 0;   // rows of packed Q
  std::int64_t kv_tokens = 0;  // rows of packed K and of packed V
  std::int64_t out_rows = 0;   // rows of O and of LSE
};

struct AttentionBlockDesc {
  std::int64_t q_row = 0;        // first query row in packed Q
  std::int64_t q_count = 0;      // number of query rows (0: nothing to do)
  std::int64_t kv_row = 0;       // first key/value row in packed K and V
  std::int64_t kv_count = 0;     // number of key/value rows (0: every row is empty)
  std::int64_t q_position = 0;   // absolute position in its sequence of query q_row
  std::int64_t kv_position = 0;  // absolute position in its sequence of key kv_row
  AttentionMask mask = AttentionMask::causal;
  std::int64_t out_row = 0;  // first row of this block's results in O and LSE
};

// One causal sequence of `tokens` rows attending to itself, rows from 0 in Q, K, V and O: the block the
// qualify and calibrate probes time.
[[nodiscard]] inline AttentionBlockDesc causal_self_block(std::int64_t tokens) {
  return {.q_row = 0,
          .q_count = tokens,
          .kv_row = 0,
          .kv_count = tokens,
          .q_position = 0,
          .kv_position = 0,
          .mask = AttentionMask::causal,
          .out_row = 0};
}

// Checks the shape and every descriptor (ranges inside the tensors, non-negative counts and positions,
// no overlapping output ranges). `entry` prefixes the message ("attention_forward", ...). Both backends
// call it before touching memory.
Status validate_attention(std::string_view entry, const AttentionShape& shape,
                          std::span<const AttentionBlockDesc> blocks);

// The CPU kernels. Spans must hold exactly the elements the shape implies (q: q_tokens·heads·head_dim,
// and so on); a size mismatch is reported with the argument's name. Online softmax over key tiles with
// a running max and sum, in the element type (float32 is the fast reference, float64 the oracle).
// Rows of O/LSE that no block names are left untouched.
Status attention_forward(const AttentionShape& shape, std::span<const AttentionBlockDesc> blocks,
                         std::span<const float> q, std::span<const float> k, std::span<const float> v,
                         std::span<float> o, std::span<float> lse);
Status attention_forward(const AttentionShape& shape, std::span<const AttentionBlockDesc> blocks,
                         std::span<const double> q, std::span<const double> k, std::span<const double> v,
                         std::span<double> o, std::span<double> lse);

// In-place merge of two partial results over the same rows and heads:
//   (O_a, LSE_a) ⊕ (O_b, LSE_b) → (O_a, LSE_a), LSE = log(e^LSE_a + e^LSE_b),
//   O = (e^LSE_a·O_a + e^LSE_b·O_b) / e^LSE.
// −inf on either side means "that side is empty" (the other side is kept as is; both empty stays empty
// with O = 0). Shapes: o_* rows × heads × head_dim, lse_* rows × heads; rows come from lse_a's size.
Status merge_partials(int heads, int head_dim, std::span<float> o_a, std::span<float> lse_a,
                      std::span<const float> o_b, std::span<const float> lse_b);
Status merge_partials(int heads, int head_dim, std::span<double> o_a, std::span<double> lse_a,
                      std::span<const double> o_b, std::span<const double> lse_b);

}  // namespace zb::kernels
