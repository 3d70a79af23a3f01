#include "core/exec/block_packing.hpp"

namespace zb {

std::vector<kernels::AttentionBlockDesc> pack_block_descs(std::span<const layout::AttentionBlock> blocks,
                                                          kernels::AttentionShape& shape) {
  std::vector<kernels::AttentionBlockDesc> descs;
  descs.reserve(blocks.size());
  for (const layout::AttentionBlock& b : blocks) {
    kernels::AttentionBlockDesc d;
    d.q_row = shape.q_tokens;
    d.q_count = b.q1 - b.q0;
    d.kv_row = shape.kv_tokens;
    d.kv_count = b.k1 - b.k0;
    d.q_position = b.q0;
    d.kv_position = b.k0;
    d.mask = b.mask == layout::Mask::causal ? kernels::AttentionMask::causal : kernels::AttentionMask::full;
    d.out_row = d.q_row;
    descs.push_back(d);
    shape.q_tokens += d.q_count;
    shape.kv_tokens += d.kv_count;
  }
  shape.out_rows = shape.q_tokens;
  return descs;
}

}  // namespace zb
