#pragma once
// `zeppelin-bench run SCENARIO --plan FILE.json`: a what-if experiment. Instead of asking a strategy, the
// run executes a plan read from a file (typically dumped with `plan --format json` and edited by hand)
// on the scenario's cluster and model, and reports it like a system of its own.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/plan/op_sources.hpp"
#include "core/run/run_scenario.hpp"
#include "core/workload/workload.hpp"

namespace zb {

// The first iteration of the scenario whose batch (drawn from `workload`) the plan covers: the same lengths
// as a multiset, since strategies order sequences their own way. Throws zb::Error (exit 2) naming both
// values when the plan's world size, GPUs per node or sequences do not fit the scenario. With `on_batch`,
// every iteration's batch is drawn and handed to it in order (the report's record of the workload);
// without, the search stops at the match.
[[nodiscard]] int match_plan_to_scenario(const plan::Plan& plan, const std::string& plan_file,
                                         const Scenario& scenario, const Workload& workload,
                                         const std::function<void(const Batch&)>& on_batch = {});

// Checks the plan against the scenario, verifies it, lowers it and checks its Program (lower::verify) and
// its sizes (plan_sizes.hpp) (every problem is exit 2: the file is wrong, not a strategy), executes it on
// the scenario's backend and returns a RunResult with one system, labelled with
// the plan's `system` or "plan:FILE". The scenario's gates are dropped: they compare systems that this
// run does not execute. `sources` (from plan::read_plan_file) place the ops in the file for the size
// check's messages.
[[nodiscard]] RunResult run_plan(const Scenario& scenario, plan::Plan plan, const std::string& plan_file,
                                 const RunOptions& options = {}, const plan::OpSources& sources = {});

}  // namespace zb
