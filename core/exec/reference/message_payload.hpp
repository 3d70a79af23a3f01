#pragma once
// What a Program message carries, on real rows. The Program says everything (core/lower/program.hpp):
// a message's `slices` name the rows (tensor, sequence, token range), its legs name byte fragments
// [offset, offset + bytes) of its modelled size. This file only turns that into float32 bytes:
//   * TensorRows: the rows a rank holds (or a received buffer holds), one RowStore per tensor;
//   * the payload of a message: every slice's rows, in slice order, row-major (token, head, dim);
//   * the real fragment of a leg: the modelled sizes are bf16 bytes of the model's shapes, the reference
//     moves float32 rows of its own small dims, so fragment [offset, offset + bytes) of the modelled
//     size maps to the same fraction of the real payload (floor at both ends): the fragments of a
//     message, which tile its modelled size, tile its real payload exactly.
// Every row travels whole (all its heads): a ring's K/V for a head slice (USP) carries the other heads'
// columns along unused. Only a head all-to-all's messages carry just their slices' heads
// (head_all_to_all.hpp), since there a receiver holds other heads of the same tokens.
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/common/token_layout.hpp"
#include "core/exec/reference/qkv_generator.hpp"
#include "core/exec/reference/row_store.hpp"
#include "core/exec/reference/transport.hpp"
#include "core/lower/payload_fragment.hpp"
#include "core/lower/program.hpp"

namespace zb::reference {

// Floats per row of `tensor` at `dims`: Q, O, dQ and dO heads·head_dim, K, V, dK and dV
// kv_heads·head_dim. Throws zb::Error (runtime) for a tensor the reference holds no rows of (GEMM rows).
[[nodiscard]] int row_width(const AttentionDims& dims, lower::Tensor tensor);

// One RowStore per tensor the attention layer moves: Q, K, V (the inputs), O (the attention output) and
// their gradients dQ, dK, dV, dO. Stores are sparse, so the ones a rank never fills cost nothing.
class TensorRows {
 public:
  explicit TensorRows(const AttentionDims& dims);
  [[nodiscard]] RowStore& of(lower::Tensor tensor);
  [[nodiscard]] const RowStore& of(lower::Tensor tensor) const;

 private:
  std::array<RowStore, 8> stores_;  // Q, K, V, O, dQ, dK, dV, dO
};

// Bytes of a message's real payload: Σ over its slices of rows · row_width · sizeof(float).
[[nodiscard]] std::uint64_t payload_bytes(const lower::Message& message, const AttentionDims& dims);

// Copies rows [begin, end) of `tensor` of `seq` into `out` (row-major, (end − begin) · width floats),
// each run of tokens from the first source that holds it. Returns the first token no source holds.
[[nodiscard]] std::optional<std::int64_t> gather_rows(std::span<const TensorRows* const> sources,
                                                      lower::Tensor tensor, int seq, std::int64_t begin,
                                                      std::int64_t end, std::span<float> out);

// A row a payload could not be packed with: slice `slice` of the message, token `token`.
struct MissingRow {
  std::size_t slice = 0;
  std::int64_t token = 0;
};

// Appends the message's payload (payload_bytes of it) to `out`, every slice gathered from `sources`.
// Returns the first row no source holds (then `out` is incomplete).
[[nodiscard]] std::optional<MissingRow> pack_payload(const lower::Message& message, const AttentionDims& dims,
                                                     std::span<const TensorRows* const> sources, Bytes& out);

// Stores a message's payload (as pack_payload wrote it) into `into`. Returns what is wrong with it
// (size, a slice outside its sequence), empty when it was stored.
[[nodiscard]] std::string unpack_payload(const lower::Message& message, const AttentionDims& dims,
                                         std::span<const std::byte> payload,
                                         const std::vector<layout::Sequence>& sequences, TensorRows& into);

// "sequence 3 tokens [0, 128) of K": how errors name a slice.
[[nodiscard]] std::string slice_text(const lower::Slice& slice);

}  // namespace zb::reference
