#pragma once
// Parts of plan::verify that reason about tokens: exactly-once coverage of the causal triangle, data
// availability of every KV range, and the consistency of the remap with the two layouts.
#include <string>
#include <vector>

#include "core/plan/plan.hpp"

namespace zb::plan {

// `heads`: the model's query heads (0 = unknown), for blocks that compute a head range.
void check_coverage_and_data(const Plan& plan, int heads, std::vector<std::string>& problems,
                             std::size_t max_problems);
void check_remap(const Plan& plan, std::vector<std::string>& problems, std::size_t max_problems);

}  // namespace zb::plan
