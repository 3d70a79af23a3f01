#pragma once
// How an attention instruction's blocks become one call of an attention kernel (kernels/attention.hpp),
// for every backend that computes real numbers: queries and keys packed block after block (block i's
// query rows start where block i−1's end, its key rows likewise), each block's output rows where its
// queries are. The reference backend packs fp32 rows by it and the cuda backend its bf16 operands, so
// the kernels see the same layout whichever backend runs the Program.
#include <span>
#include <vector>

#include "core/common/token_layout.hpp"
#include "kernels/attention.hpp"

namespace zb {

// The kernel descriptors of `blocks`, in their order; adds their query and key rows to `shape`
// (q_tokens, kv_tokens, out_rows), whose heads and head_dim the caller sets.
[[nodiscard]] std::vector<kernels::AttentionBlockDesc> pack_block_descs(
    std::span<const layout::AttentionBlock> blocks, kernels::AttentionShape& shape);

}  // namespace zb
