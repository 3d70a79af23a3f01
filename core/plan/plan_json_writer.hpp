#pragma once
// Internal to the plan writer: one op's JSON, and a rank's op list with repeated ops folded into runs
// (plan_json_runs.cpp). docs/PLAN_FORMAT.md describes both forms.
#include <vector>

#include "core/plan/plan_format.hpp"
#include "core/plan/plan_json_sink.hpp"

namespace zb::plan::detail {

// One op as printed; in Detail::compact a list of blocks is printed as arrays, in Detail::full as objects.
[[nodiscard]] ojson op_json(const Op& op, Detail detail);

// The op list of one rank into `sink`, as elements of the array it has open: in Detail::full one object
// per op; in Detail::compact, a stretch of ops that repeats a pattern (a ring's steps) as one run.
void write_ops(JsonSink& sink, const std::vector<Op>& ops, Detail detail);

}  // namespace zb::plan::detail
