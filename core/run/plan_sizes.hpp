#pragma once
// What a plan's sizes must be on the scenario's model, for `run --plan`: a hand-edited plan whose send
// bytes or GEMM shapes disagree with the rows and layers they stand for is refused (exit 2), because the
// simulator would charge the edited sizes while the reference backend moves and multiplies the real rows
// and still reports the plan verified (issue 38). docs/PLAN_FORMAT.md, "What-if experiments", lists what
// is checked:
//   * every GEMM: n and k are the model's layer GEMM of its name (qkv, o_proj, mlp_up, mlp_down), the
//     split one cut among the rank's tensor-parallel group; without tensor parallelism m is the tokens the
//     rank holds in the linear layout in the op's micro-batch;
//   * every K/V send and recv: bytes are the K and V rows of `kv_owner` it carries (the lowering's
//     slices), 2 · rows · kv_hidden · dtype bytes times the share of K/V heads its head range covers;
//   * every remap without tensor parallelism: bytes_out and bytes_in are its moves' tokens times Q|K|V's
//     (to_attention) or a hidden row's (to_linear) bytes per token.
// Collectives and sends without an owner are not checked: their bytes are charged by the simulator only.
#include <string>
#include <vector>

#include "core/common/error.hpp"
#include "core/cost/cost_model.hpp"
#include "core/lower/program.hpp"
#include "core/plan/op_sources.hpp"
#include "core/plan/plan.hpp"

namespace zb {

// The size problems of `plan` (lowered as `program`), each at `plan_file` and the op's JSON path where the
// file wrote it (`sources`, from plan::from_json): ranks[r].ops[e].bytes for an op written whole,
// ranks[r].ops[e].ops[j]@m.bytes for repetition m of op j of a run; at most `max_problems` of them. Without
// sources (a plan that was never a file, or one with no runs) the path is ranks[r].ops[id].
[[nodiscard]] std::vector<Problem> plan_size_problems(const plan::Plan& plan, const lower::Program& program,
                                                      const CostModel& cost, const std::string& plan_file,
                                                      std::size_t max_problems,
                                                      const plan::OpSources& sources = {});

}  // namespace zb
