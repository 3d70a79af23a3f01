#pragma once
// lower(): Plan → Program, the one place that works out what a plan means (core/lower/program.hpp says
// what the result promises). Throws zb::Error (runtime) naming the rank and plan op when the plan cannot
// be lowered: a send without its recv, two transfers with one (src, dst, tag), a dependency on a later
// op, remap moves that the two ends disagree on, a collective whose members disagree.
#include "core/cost/cost_model.hpp"
#include "core/lower/program.hpp"
#include "core/plan/plan.hpp"

namespace zb::lower {

struct LowerOptions {
  bool backward = true;  // derive the backward pass too (the scenario's passes = fwd_bwd)
  // List each message's rows (Message::slices), which the executors that move real data read
  // (Executor::reads_rows). Off: every message's slices are empty and everything else is the same: what
  // the planner's estimate and the simulator time (bytes, legs, dependencies). A ring group of many
  // sequences lists each of them in every owner's K/V and dK/dV: tens of millions of slices, gigabytes,
  // for a 16384-GPU batch of a million documents.
  bool rows = true;
};

[[nodiscard]] Program lower(const plan::Plan& plan, const CostModel& cost, const LowerOptions& options = {});
// How many plans this process has lowered so far (calls of lower()): a statistic, so that a test or
// `run --verbose` can see that a run executes the Program its prediction lowered instead of lowering
// each plan again.
[[nodiscard]] long lowerings();

// Durations of compute instructions under the cost model, shared by lowering and tests.
// Attention: one kernel call per block (or one varlen call per ring step) at the efficiency of its
// query rows; backward at the profile's backward FLOP factor. GEMMs: the forward product; its data and
// weight gradients each take half of backward_linear_factor × the forward time.
[[nodiscard]] double attention_seconds(const plan::Op& op, const CostModel& cost, Pass pass);
// The FLOPs of that op in `pass`, for the heads it computes (op.heads).
[[nodiscard]] double attention_flops(const plan::Op& op, const CostModel& cost, Pass pass);
[[nodiscard]] double gemm_seconds(const plan::Op& op, const CostModel& cost, GemmPart part);
// The FLOPs of that GEMM part: the forward product 2·m·n·k; each gradient half of backward_linear_factor ×
// it.
[[nodiscard]] double gemm_flops(const plan::Op& op, const CostModel& cost, GemmPart part);
// All the compute time lowering gives `op` in `pass`: an attention op's one instruction; a GEMM's forward
// product, or in the backward pass its data and weight gradients together; 0 for ops that compute nothing.
// The planner's compute floor (core/strategies/predict.hpp) sums it per rank.
[[nodiscard]] double compute_seconds(const plan::Op& op, const CostModel& cost, Pass pass);

}  // namespace zb::lower
