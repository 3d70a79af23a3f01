#pragma once
// Helpers shared by the CPU forward and backward attention kernels, so both read the block descriptors
// (mask, visible keys) and report size mismatches the same way. Internal to kernels/cpu.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "kernels/attention.hpp"

namespace zb::kernels::cpu_detail {

inline Status check_size(std::string_view entry, const char* name, std::size_t got, std::int64_t want) {
  if (static_cast<std::int64_t>(got) == want) return Status::success();
  return Status::failure(std::string(entry) + ": " + name + " has " + std::to_string(got) +
                         " elements, the shape needs " + std::to_string(want));
}

// Number of keys query `i` of block `b` sees: visible keys are always a prefix of the block's keys,
// because causal visibility kv_position + j ≤ q_position + i is monotonic in j.
inline std::int64_t visible_keys(const AttentionBlockDesc& b, std::int64_t i) {
  if (b.mask == AttentionMask::full) return b.kv_count;
  return std::clamp<std::int64_t>(b.q_position + i - b.kv_position + 1, 0, b.kv_count);
}

}  // namespace zb::kernels::cpu_detail
