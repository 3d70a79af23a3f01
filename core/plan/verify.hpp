#pragma once
// plan::verify checks the promises documented in plan.hpp. It is independent of how a strategy built
// the plan, so tests run it over random batches for every strategy, and `zeppelin-bench plan --verify`
// runs it on demand. Cost: O(blocks · log) for coverage, O(ops · ranks) for data availability; a
// sequence whose blocks slice heads costs O(blocks²) once per distinct head interval.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/plan/plan.hpp"

namespace zb::plan {

struct VerifyOptions {
  std::int64_t token_capacity = -1;  // per GPU and micro-batch; -1 = do not check memory
  std::size_t max_problems = 20;     // stop collecting after this many
  // The model's query heads, for coverage per head when blocks carry head ranges. 0 = unknown: fine while
  // every block computes all heads; a plan that slices heads is then reported as unverifiable.
  int heads = 0;
  // When set, a GPU's capacity by the width of its tensor-parallel group (Plan::tensor_parallel_groups; 1
  // outside any), instead of token_capacity: a GPU of a wider TP group holds more of its group's tokens.
  std::function<std::int64_t(int tp_width)> capacity_of_tp_width = {};
};

// Returns the problems found, each naming the rank, op or sequence; empty = the plan is valid.
[[nodiscard]] std::vector<std::string> verify(const Plan& plan, const VerifyOptions& options = {});

}  // namespace zb::plan
