#pragma once
// plan::verify checks the promises documented in plan.hpp. It is independent of how a strategy built
// the plan, so tests run it over random batches for every strategy, and `zeppelin-bench plan --verify`
// runs it on demand. Cost: O(blocks · log) for coverage, O(ops · ranks) for data availability.
#include <cstdint>
#include <string>
#include <vector>

#include "core/plan/plan.hpp"

namespace zb::plan {

struct VerifyOptions {
  std::int64_t token_capacity = -1;  // per GPU and micro-batch; -1 = do not check memory
  std::size_t max_problems = 20;     // stop collecting after this many
};

// Returns the problems found, each naming the rank, op or sequence; empty = the plan is valid.
[[nodiscard]] std::vector<std::string> verify(const Plan& plan, const VerifyOptions& options = {});

}  // namespace zb::plan
