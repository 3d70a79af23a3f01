#pragma once
// One (system, iteration) of the run pipeline once a plan exists, shared by `run` (the strategy planned
// it) and `run --plan` (it was read from a file), so both execute and measure a plan the same way.
#include <memory>
#include <string_view>

#include "core/cost/iteration_cost.hpp"
#include "core/exec/executor.hpp"
#include "core/run/run_result.hpp"

namespace zb {

// The facts of an iteration that the plan itself holds (feasibility, OOM reports, planner figures).
[[nodiscard]] IterationResult iteration_of(const plan::Plan& plan, int iteration);

// Executes a feasible plan, computes its metrics and appends the iteration to `system`, which keeps the
// trace and plan of its first feasible iteration. The only place the pipeline calls an executor. With a
// `simulator`, a measured trace of the scenario's own model is set beside the simulation of the same
// Program (RunMetrics::simulated_layers_seconds, simulation_ratio).
void execute_iteration(Executor& executor, const Scenario& scenario, const CostModel& cost, plan::Plan plan,
                       IterationResult iteration, SystemResult& system, Executor* simulator = nullptr);

// The layers' windows of `trace` for the whole-iteration parts: each pass's makespan and the busy
// fraction of its busiest NIC (the simulated NIC links' bytes in the pass / (NIC bandwidth · η · makespan));
// NIC counters sampled by a measured run are not split by pass and count as no traffic.
[[nodiscard]] LayerWindow layer_window_of(const Trace& trace, const CostModel& cost);

// The whole-iteration parts of `plan` run as `trace` shows (core/cost/iteration_cost.hpp): the gradient
// buckets timed on the SimGrid model and sharing the NICs with the layers' traffic, and, for a simulated
// trace, each rank's embedding, head and optimizer under the iteration's compute multipliers (the same
// m(r, i) the simulator gave its layers).
[[nodiscard]] WholeIterationParts simulated_whole_iteration_parts(const plan::Plan& plan, const Trace& trace,
                                                                  const Scenario& scenario,
                                                                  const ExecContext& context);

// The capacities a run's long-document shares are measured against (core/metrics/long_documents.hpp):
// one GPU's token capacity (a TP group's, on the grid strategies plan on) and a node's grid GPUs times it.
[[nodiscard]] LongDocumentRecord long_document_record(const Scenario& scenario, const CostModel& cost);

// The simulator for the simulation ratio of a run on the registered backend `backend` (none for a
// simulated backend, or when not wanted).
[[nodiscard]] std::unique_ptr<Executor> simulator_for(std::string_view backend, bool wanted);

}  // namespace zb
