#pragma once
// PlanBuilder: the shared mechanics every strategy uses to write a Plan, so that a strategy only decides
// placement. It appends ops with ids and deps, generates zigzag rings (with an optional route for each
// hop), the per-layer GEMMs, the remap all-to-all-v, and fills layouts and predictions at the end.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/cost/cost_model.hpp"
#include "core/plan/plan.hpp"

namespace zb {

class PlanBuilder {
 public:
  // Route chooser for one ring hop src → dst of `bytes` at `step` (default: direct).
  using RouteFn = std::function<plan::Route(int src, int dst, std::int64_t bytes, int step)>;

  PlanBuilder(const CostModel& cost, std::string system, std::string strategy);

  // A sketch, for bounding a layout before it is built whole: the compute ops (attention and GEMMs, in
  // the order and with the sizes the whole build gives them) and the layouts, without a transfer, a
  // collective or a route (add_op drops them and returns −1; ring hops and remaps are not written). Its
  // predicted_floor (core/strategies/predict.hpp) is the whole build's, at a fraction of the cost: a
  // planner skips a candidate whose compute alone cannot beat its best plan without building it. Never
  // lowered or run: the ops' dependencies may name dropped ops.
  void set_compute_only(bool on) { compute_only_ = on; }

  // Adds the batch's sequences (ids in order) to micro-batch `mb`; returns the first id.
  int add_sequence(std::int64_t length, int micro_batch);
  void set_micro_batches(int n);

  // Adds a CP group and its attention-layout shards (whole sequences for one rank, zigzag otherwise);
  // with `with_layout` false the strategy writes the members' shards itself (add_attention_shards).
  int add_group(plan::Level level, std::vector<int> ranks, std::vector<int> sequences, int micro_batch,
                bool with_layout = true);
  void add_attention_shards(int rank, const std::vector<plan::Shard>& shards);

  // Appends one op to `rank`'s list and returns its id (−1: a sketch drops every op but compute).
  int add_op(int rank, plan::Op op);
  // An op already appended, for a strategy that narrows what a generated op carries (USP's head slices).
  plan::Op& mutable_op(int rank, int id) {
    return plan_.ranks[static_cast<std::size_t>(rank)].ops[static_cast<std::size_t>(id)];
  }
  // A plan-unique tag for an op pair or a collective the strategy writes itself (ring hops take theirs here
  // too).
  int new_tag() { return next_tag_++; }

  // Called after a ring step's attention op is appended to the list of the rank at group position `pos`
  // (`op` its id): the strategy may append other compute there, which then runs before the next step.
  using StepHook = std::function<void(int pos, int step, int op)>;

  // Emits the attention of a group: a local group is one varlen call; a ring of P ranks is P zigzag
  // steps with KV sends/recvs overlapping compute. `ready[r]` is the op each rank's first step waits
  // for (-1 = none). Returns, per group rank position, the ids of its attention ops.
  std::vector<std::vector<int>> add_attention(int group, const std::vector<int>& ready,
                                              const RouteFn& route = {}, const StepHook& after_step = {});
  // One varlen call over some of a local group's sequences (all of them: add_attention), after `deps`;
  // returns its id, or −1 when they hold no pair. A strategy that splits a local group's work into several
  // calls (Zeppelin's engine, filling a ring's waits) gives every sequence of the group to exactly one.
  int add_local_attention(int group, const std::vector<int>& sequences, std::vector<int> deps);

  // Emits the per-layer GEMMs for `tokens` rows on `rank` after `deps`: "qkv" (returns its id) and,
  // with add_mlp_gemms, "o_proj", "mlp_up", "mlp_down" (returns the last id).
  int add_qkv_gemm(int rank, std::int64_t tokens, std::vector<int> deps, int micro_batch);
  int add_output_gemms(int rank, std::int64_t tokens, std::vector<int> deps, int micro_batch);

  // The remap of one micro-batch: every rank gets one remap op with its moves; returns op ids per rank.
  std::vector<int> add_remap(const std::vector<plan::RemapMove>& moves, plan::RemapDirection direction,
                             const std::vector<std::vector<int>>& deps, double bytes_per_token,
                             int micro_batch);

  // Appends to `rank`'s linear layout (by default the linear layout is the attention layout; once a
  // strategy adds to it, it is what was added).
  void add_linear_shards(int rank, const std::vector<plan::Shard>& shards);
  void add_remap_moves(const std::vector<plan::RemapMove>& moves);
  void add_info(const std::string& key, nlohmann::json value);
  void set_passes(Passes passes) { passes_ = passes; }

  // Pair count of a zigzag ring step (q_pos's chunks against kv_pos's chunks) over the group's sequences.
  struct StepPairs {
    double pairs = 0;
    double q_tokens = 0;  // the step's varlen call, per query chunk (EquivalentQTokens)
  };
  [[nodiscard]] std::int64_t zigzag_rank_tokens(const plan::Group& g, int pos) const;

  [[nodiscard]] int world_size() const { return plan_.world_size; }
  [[nodiscard]] const plan::Plan& plan() const { return plan_; }
  [[nodiscard]] const CostModel& cost() const { return cost_; }

  // Fills the linear layout (if unset), the predictions, and returns the plan.
  plan::Plan finish();
  // The same without the predictions, for a strategy that edits the plan and predicts it afterwards.
  plan::Plan finish_unpredicted();

 private:
  const CostModel& cost_;
  plan::Plan plan_;
  bool linear_set_ = false;
  Passes passes_ = Passes::fwd_bwd;
  int next_tag_ = 0;
  bool compute_only_ = false;
};

// Returns a plan with `oom` filled: every rank whose need exceeds its capacity is listed.
[[nodiscard]] plan::Plan oom_plan(const CostModel& cost, std::string system, std::string strategy,
                                  const std::vector<std::int64_t>& lengths, std::vector<plan::OomReport> oom);

}  // namespace zb
