#include "core/strategies/zeppelin/baseline_shapes.hpp"

#include <algorithm>

#include "core/strategies/packing.hpp"

namespace zb::zeppelin {

std::vector<int> baseline_shape_degrees(const CostModel& cost, const std::vector<std::int64_t>& lengths) {
  const int world = cost.cluster().world_size();
  const int node = cost.cluster().gpus_per_node;
  const std::int64_t per_gpu = cost.token_capacity_per_gpu();
  const std::int64_t longest = lengths.empty() ? 0 : *std::max_element(lengths.begin(), lengths.end());
  std::vector<int> degrees;
  bool wide_added = false;
  for (int c = 1; c <= world; ++c) {
    if (world % c != 0) continue;
    if (c <= node) {
      degrees.push_back(c);
      continue;
    }
    // Same padding rule as the baselines' packing: a document needs pad(s, 2C) ≤ C·M.
    const bool holds_longest = pad_to(longest, 2LL * c) <= per_gpu * c;
    const bool node_holds_longest = pad_to(longest, 2LL * node) <= per_gpu * node;
    if (!wide_added && holds_longest && !node_holds_longest) {
      degrees.push_back(c);
      wide_added = true;
    }
  }
  return degrees;
}

}  // namespace zb::zeppelin
