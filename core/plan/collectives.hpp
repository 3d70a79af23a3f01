#pragma once
// The part of plan::verify that matches collective ops across ranks (the way check_matching pairs sends
// with recvs): a collective is one op on each of its ranks, and they must agree on what it is.
#include <string>
#include <vector>

#include "core/plan/plan.hpp"

namespace zb::plan {

// Every rank of an op's collective_ranks has exactly one collective op with the same tag, kind and ranks;
// the ranks are valid and distinct and include the op's own rank.
void check_collectives(const Plan& plan, std::vector<std::string>& problems, std::size_t max_problems);

}  // namespace zb::plan
