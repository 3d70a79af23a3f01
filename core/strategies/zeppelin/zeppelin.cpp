// zeppelin: hierarchical sequence partitioning, an attention engine running rings of different degrees
// side by side (queues inter-node → intra-node → local), the routing layer for inter-node hops and the
// remapping layer to a token-balanced linear layout. Options: routing, remap, partitioning
// (hierarchical | flat), for ablations, and best_of. See docs/STRATEGIES.md.
//
// The system under test runs its own code: the whole iteration is partitioned at once (micro-batches are
// memory slots of each GPU, core/strategies/zeppelin/partitioner.hpp), and when it does not fit the
// planner retries with more micro-batches. Only the explicit option best_of (never a default) also plans
// the packed-CP layouts of the fixed-degree baselines (core/strategies/zeppelin/baseline_shapes.hpp),
// hybrid-dp's and USP's, keeping the plan with the least estimated time; its label says "best-of(...)"
// so that no report calls it zeppelin. Every plan tried (with its estimate) is in the plan's info, and
// `info.layout` names the layout that ran.
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <tuple>

#include "core/strategies/hybrid_dp_layout.hpp"
#include "core/strategies/packed_cp.hpp"
#include "core/strategies/plan_builder.hpp"
#include "core/strategies/predict.hpp"
#include "core/strategies/registration.hpp"
#include "core/strategies/ulysses.hpp"
#include "core/strategies/zeppelin/baseline_shapes.hpp"
#include "core/strategies/zeppelin/engine.hpp"
#include "core/strategies/zeppelin/head_groups.hpp"
#include "core/strategies/zeppelin/partitioner.hpp"
#include "core/strategies/zeppelin/remap.hpp"
#include "core/strategies/zeppelin/routing.hpp"

namespace zb {
namespace {

constexpr double micro_batch_fill = 0.9;  // plan micro-batches to 90 % of memory: balancing needs slack

class Zeppelin final : public Strategy {
 public:
  Zeppelin(const SystemSpec& system, const Scenario& scenario, const CostModel& cost)
      : system_(system), passes_(scenario.passes), cost_(cost) {
    // Complete and checked options (registration below): no defaults repeated here.
    const auto& o = system.options;
    routing_ = o.at("routing").get<bool>();
    remap_ = o.at("remap").get<bool>();
    hierarchical_ = o.at("partitioning").get<std::string>() == "hierarchical";
    best_of_ = o.at("best_of").get<bool>();
    remap_always_ = remap_ && o.at("remap_policy").get<std::string>() == "always";
    heads_auto_ = o.at("heads").get<std::string>() == "auto";
    const int t = std::max(1, scenario.parallelism.tensor);
    usp_kv_heads_ = std::max(1, cost.model().kv_heads / t);
    usp_degrees_ = ulysses_degrees(cost, t);
  }

  plan::Plan make_plan(const Batch& batch) const override;

 private:
  // The micro-batch count memory suggests: ⌈tokens / (fill · world · per-GPU capacity)⌉.
  int memory_micro_batches(const std::vector<std::int64_t>& lengths) const;
  // The narrowest divisor of the node's GPUs whose per-GPU capacity holds the longest sequence; 0 when
  // none does.
  int flat_ring_width(const std::vector<std::int64_t>& lengths) const;
  // Zeppelin's own plan of the batch as k micro-batches (an OOM plan when one does not fit).
  // How the own partition of one plan is made: with the remap (attention balanced per micro-batch, each
  // remapped to the token-balanced layout) or without (attention and linear work balanced together), and
  // balancing each micro-batch's GPUs or each GPU's whole iteration.
  struct Variant {
    bool remap = false;
    bool per_micro_batch = false;
    zeppelin::Degrees degrees = zeppelin::Degrees::balance;
    zeppelin::HeadGroups heads = zeppelin::HeadGroups::none;  // rings that run head-parallel (heads: auto)
    int flat = 0;  // > 0: the flat partition over groups of this many GPUs, whatever the option says
  };
  // The plan of a partition that fits, unpredicted (predict() it, or bound it with predicted_floor
  // first). `compute_only`: its sketch (PlanBuilder::set_compute_only), whose predicted_floor is the whole
  // plan's, to bound a candidate before building it.
  plan::Plan plan_partition(const Batch& batch, const zeppelin::Partition& part, int k,
                            const Variant& variant, bool compute_only) const;
  zeppelin::PartitionOptions partition_options(int k, const Variant& variant) const;
  // Appends micro-batch `mb` of the partition to the plan (as the plan's micro-batch `plan_mb`: empty
  // slots are skipped).
  void plan_micro_batch(PlanBuilder& b, const std::vector<std::int64_t>& lengths,
                        const zeppelin::Partition& part,
                        const std::vector<std::optional<zeppelin::HeadGroup>>& heads, bool remap, int mb,
                        int plan_mb, std::vector<int>& last_op, zeppelin::Router& router) const;

  SystemSpec system_;
  Passes passes_;
  const CostModel& cost_;
  bool routing_ = true, remap_ = true, hierarchical_ = true, best_of_ = false;
  bool remap_always_ = false;     // the paper's engine: every micro-batch remapped, whatever the estimate
  bool heads_auto_ = false;       // beyond the paper: rings may run head-parallel where it pays
  int usp_kv_heads_ = 1;          // K/V heads per TP rank, for USP's layout
  std::vector<int> usp_degrees_;  // the Ulysses degrees usable here, ascending
};

const char* degrees_name(zeppelin::Degrees d) {
  switch (d) {
    case zeppelin::Degrees::tiled:
      return "tiled";
    case zeppelin::Degrees::memory:
      return "memory";
    case zeppelin::Degrees::node:
      return "node";
    case zeppelin::Degrees::balance:
      break;
  }
  return "balance";
}

const char* heads_name(zeppelin::HeadGroups h) {
  return h == zeppelin::HeadGroups::all ? "all" : "ring";
}

// The last GPU's finish over the first's in a plan's estimate (1 when it has none).
double finish_spread(const plan::Plan& p) {
  double first_done = 0, last_done = 0;
  for (std::size_t r = 0; r < p.predicted.per_rank.size(); ++r) {
    const double t = p.predicted.per_rank[r].seconds;
    first_done = r == 0 ? t : std::min(first_done, t);
    last_done = std::max(last_done, t);
  }
  return first_done > 0 ? last_done / first_done : 1.0;
}

int Zeppelin::flat_ring_width(const std::vector<std::int64_t>& lengths) const {
  const std::int64_t longest = lengths.empty() ? 0 : *std::max_element(lengths.begin(), lengths.end());
  const std::int64_t capacity = std::max<std::int64_t>(1, cost_.token_capacity_per_gpu());
  const int gpn = cost_.cluster().gpus_per_node;
  for (int w = 1; w <= gpn; ++w)
    if (gpn % w == 0 && longest <= capacity * w) return w;
  return 0;
}

int Zeppelin::memory_micro_batches(const std::vector<std::int64_t>& lengths) const {
  const double capacity =
      static_cast<double>(cost_.token_capacity_per_gpu()) * cost_.cluster().world_size() * micro_batch_fill;
  const double total = std::accumulate(lengths.begin(), lengths.end(), 0.0);
  return static_cast<int>(std::max(1.0, std::ceil(total / std::max(1.0, capacity))));
}

void Zeppelin::plan_micro_batch(PlanBuilder& b, const std::vector<std::int64_t>& lengths,
                                const zeppelin::Partition& part,
                                const std::vector<std::optional<zeppelin::HeadGroup>>& heads, bool remap_on,
                                int part_mb, int mb, std::vector<int>& last_op,
                                zeppelin::Router& router) const {
  const int world = b.world_size();
  // This micro-batch's documents become sequences in the order its groups list them. Head-parallel groups
  // on the same GPUs in the same shape are one group (one pair of all-to-alls) at the place of the first,
  // listed by its first plan group.
  std::vector<int> group_ids;
  std::map<int, HeadParallelGroup> head_parallel;
  using HeadKey = std::tuple<std::vector<int>, int, int>;       // GPUs, u, r
  std::map<HeadKey, std::vector<std::size_t>> same_head_group;  // partition groups, in order
  for (std::size_t i = 0; i < part.groups.size(); ++i) {
    if (part.groups[i].micro_batch == part_mb && heads[i])
      same_head_group[{heads[i]->ranks, heads[i]->shape.degree, heads[i]->shape.ring}].push_back(i);
  }
  for (std::size_t i = 0; i < part.groups.size(); ++i) {
    const auto& g = part.groups[i];
    if (g.micro_batch != part_mb) continue;
    if (!heads[i]) {
      std::vector<int> seqs;
      for (int d : g.docs) seqs.push_back(b.add_sequence(lengths[static_cast<std::size_t>(d)], mb));
      group_ids.push_back(b.add_group(g.level, g.ranks, seqs, mb));
      continue;
    }
    const auto& members = same_head_group.at({heads[i]->ranks, heads[i]->shape.degree, heads[i]->shape.ring});
    if (members.front() != i) continue;  // planned with the first of its shape
    std::vector<int> seqs;
    for (const std::size_t j : members) {
      for (int d : part.groups[j].docs)
        seqs.push_back(b.add_sequence(lengths[static_cast<std::size_t>(d)], mb));
    }
    HeadParallelGroup hp = add_head_parallel_group(b, cost_, heads[i]->shape, heads[i]->ranks, seqs, mb);
    const int id = hp.shape.ring == 1 ? hp.u_groups.front() : hp.rings.front();
    group_ids.push_back(id);
    head_parallel.emplace(id, std::move(hp));
  }

  // This micro-batch's attention shards per rank, and the token-balanced linear layout.
  std::vector<std::vector<plan::Shard>> attn(static_cast<std::size_t>(world));
  for (int r = 0; r < world; ++r) {
    for (const auto& s : b.plan().attention_layout[static_cast<std::size_t>(r)].shards) {
      if (b.plan().sequences[static_cast<std::size_t>(s.seq)].micro_batch == mb)
        attn[static_cast<std::size_t>(r)].push_back(s);
    }
  }
  const zeppelin::RemapPlan remap =
      remap_on ? zeppelin::balance_tokens(attn, b.plan().gpus_per_node) : zeppelin::RemapPlan{attn, {}};

  auto tokens_of = [](const std::vector<plan::Shard>& v) {
    std::int64_t t = 0;
    for (const auto& s : v) t += s.size();
    return t;
  };
  std::vector<int> ready(static_cast<std::size_t>(world), -1);
  std::vector<std::vector<int>> after_qkv(static_cast<std::size_t>(world));
  for (int r = 0; r < world; ++r) {
    const auto prev = last_op[static_cast<std::size_t>(r)];
    std::vector<int> deps = prev >= 0 ? std::vector<int>{prev} : std::vector<int>{};
    const auto t = tokens_of(remap.linear[static_cast<std::size_t>(r)]);
    ready[static_cast<std::size_t>(r)] = t > 0 ? b.add_qkv_gemm(r, t, deps, mb) : prev;
    if (ready[static_cast<std::size_t>(r)] >= 0)
      after_qkv[static_cast<std::size_t>(r)] = {ready[static_cast<std::size_t>(r)]};
  }
  if (!remap.moves.empty()) {
    const auto ids =
        b.add_remap(remap.moves, plan::RemapDirection::to_attention, after_qkv, cost_.qkv_bytes(1), mb);
    for (int r = 0; r < world; ++r) {
      if (ids[static_cast<std::size_t>(r)] >= 0)
        ready[static_cast<std::size_t>(r)] = ids[static_cast<std::size_t>(r)];
    }
  }
  // The engine: rings in the partition's order (inter-node, then intra-node), local work filling their
  // waits (core/strategies/zeppelin/engine.hpp).
  const auto route = [&](int src, int dst, std::int64_t bytes, int step) {
    return routing_ ? router.route(src, dst, bytes, mb * 1'000'000 + step) : plan::Route{};
  };
  const std::vector<std::vector<int>> attn_ops = zeppelin::emit_attention(
      b, cost_, zeppelin::EngineOptions{routing_}, group_ids, ready, route, head_parallel);
  std::vector<std::vector<int>> out_deps(static_cast<std::size_t>(world));
  for (int r = 0; r < world; ++r) {
    out_deps[static_cast<std::size_t>(r)] = attn_ops[static_cast<std::size_t>(r)];
    if (ready[static_cast<std::size_t>(r)] >= 0)
      out_deps[static_cast<std::size_t>(r)].push_back(ready[static_cast<std::size_t>(r)]);
  }
  if (!remap.moves.empty()) {
    const auto ids =
        b.add_remap(remap.moves, plan::RemapDirection::to_linear, out_deps, cost_.hidden_bytes(1), mb);
    for (int r = 0; r < world; ++r) {
      if (ids[static_cast<std::size_t>(r)] >= 0)
        out_deps[static_cast<std::size_t>(r)].push_back(ids[static_cast<std::size_t>(r)]);
    }
  }
  for (int r = 0; r < world; ++r) {
    const auto t = tokens_of(remap.linear[static_cast<std::size_t>(r)]);
    if (t > 0)
      last_op[static_cast<std::size_t>(r)] =
          b.add_output_gemms(r, t, out_deps[static_cast<std::size_t>(r)], mb);
    else if (!out_deps[static_cast<std::size_t>(r)].empty())
      last_op[static_cast<std::size_t>(r)] = *std::max_element(out_deps[static_cast<std::size_t>(r)].begin(),
                                                               out_deps[static_cast<std::size_t>(r)].end());
  }
  // Accumulate this micro-batch's linear layout and remap.
  for (int r = 0; r < world; ++r) b.add_linear_shards(r, remap.linear[static_cast<std::size_t>(r)]);
  b.add_remap_moves(remap.moves);
}

zeppelin::PartitionOptions Zeppelin::partition_options(int k, const Variant& variant) const {
  zeppelin::PartitionOptions po;
  po.routing = routing_;
  po.hierarchical = hierarchical_ && variant.flat == 0;
  po.flat_width = variant.flat;
  po.backward = passes_ == Passes::fwd_bwd;
  po.micro_batches = k;
  po.include_linear = !variant.remap;  // without the remap, linear work follows the attention layout
  po.per_micro_batch = variant.per_micro_batch;
  po.degrees = variant.degrees;
  return po;
}

plan::Plan Zeppelin::plan_partition(const Batch& batch, const zeppelin::Partition& part, int k,
                                    const Variant& variant, bool compute_only) const {
  const zeppelin::PartitionOptions po = partition_options(k, variant);
  const auto heads =
      zeppelin::head_groups(part, cost_, batch.lengths, {variant.heads, usp_degrees_, usp_kv_heads_});

  PlanBuilder b(cost_, system_.label, system_.name);
  b.set_passes(passes_);
  b.set_compute_only(compute_only);
  zeppelin::Router router(cost_.cluster());
  std::vector<int> last_op(static_cast<std::size_t>(cost_.cluster().world_size()), -1);
  // Micro-batch slots the partition left empty are no micro-batch of the plan.
  int plan_mbs = 0;
  for (int mb = 0; mb < part.micro_batches; ++mb) {
    const bool used = std::any_of(part.groups.begin(), part.groups.end(),
                                  [mb](const zeppelin::GroupAssignment& g) { return g.micro_batch == mb; });
    if (used) plan_micro_batch(b, batch.lengths, part, heads, variant.remap, mb, plan_mbs++, last_op, router);
  }
  b.set_micro_batches(std::max(1, plan_mbs));
  b.add_info("layout", po.hierarchical ? "hierarchical" : "flat");
  // How many documents each class of the partition holds (the reports show which classes ran).
  int per_level[3] = {0, 0, 0};
  for (const auto& g : part.groups) per_level[static_cast<int>(g.level)] += static_cast<int>(g.docs.size());
  b.add_info("documents_local", per_level[static_cast<int>(plan::Level::local)]);
  b.add_info("documents_intra_node", per_level[static_cast<int>(plan::Level::intra_node)]);
  b.add_info("documents_inter_node", per_level[static_cast<int>(plan::Level::inter_node)]);
  if (heads_auto_) {
    int head_parallel = 0;
    for (std::size_t i = 0; i < heads.size(); ++i)
      head_parallel += heads[i] ? static_cast<int>(part.groups[i].docs.size()) : 0;
    b.add_info("documents_head_parallel", head_parallel);
    b.add_info("heads", heads_name(variant.heads));
  }
  b.add_info("routing", routing_);
  b.add_info("remap", remap_);
  b.add_info("partitioning", po.hierarchical ? "hierarchical" : "flat");
  b.add_info("balance", variant.per_micro_batch ? "per-micro-batch" : "per-gpu");
  b.add_info("degrees", degrees_name(variant.degrees));
  b.add_info("thresholds", {{"micro_batch_slots", k},
                            {"remap", variant.remap},
                            {"balance", variant.per_micro_batch ? "per-micro-batch" : "per-gpu"},
                            {"hide_nvlink_tokens", part.thresholds.hide_nvlink_tokens},
                            {"hide_internode_tokens", part.thresholds.hide_internode_tokens},
                            {"local_below", part.thresholds.local_below},
                            {"inter_from", part.thresholds.inter_from},
                            {"load_target_ms", part.thresholds.load_target_seconds * 1e3}});
  return b.finish_unpredicted();
}

plan::Plan Zeppelin::make_plan(const Batch& batch) const {
  nlohmann::json tried = nlohmann::json::array();
  auto note = [&tried](const plan::Plan& p, nlohmann::json what) {
    what["feasible"] = p.feasible();
    if (p.feasible())
      what["predicted_ms"] = p.predicted.iteration_seconds * 1e3;
    else
      what["oom"] = p.oom.front().str();
    tried.push_back(std::move(what));
  };
  // Zeppelin's own plan at the micro-batch count memory suggests, and with more micro-batches while a
  // micro-batch does not fit (smaller micro-batches leave each GPU more room), up to one document each.
  // A document longer than the whole cluster holds fits no count: plan once, to report it.
  const int most_k = std::max(1, static_cast<int>(batch.lengths.size()));
  const int first_k = std::min(memory_micro_batches(batch.lengths), most_k);
  const std::int64_t longest =
      batch.lengths.empty() ? 0 : *std::max_element(batch.lengths.begin(), batch.lengths.end());
  const bool can_fit = longest <= cost_.token_capacity_per_gpu() * cost_.cluster().world_size();
  std::optional<plan::Plan> best;
  std::optional<plan::Plan> first_oom;
  std::vector<int> counts;
  for (int k = first_k; can_fit && k < most_k; k = std::max(k + 1, k + k / 2)) counts.push_back(k);
  counts.push_back(can_fit ? most_k : first_k);
  // At each count the partition is made several ways (docs/STRATEGIES.md, zeppelin steps 2 and 9), and
  // the lowered plan's estimate picks one. Planning a layout costs far more than partitioning it, so only
  // the ways that can differ are planned: ring degrees by the paper's rule, then tiled to the node and by
  // memory alone where those give other degrees (balancing each GPU's whole iteration, nothing joining the
  // GPUs between micro-batches); then, on the best degrees so far, the remap where the best plan's linear
  // tokens are uneven (the remap balances them), and balancing each micro-batch where its GPUs' forward
  // finish times spread (rings waiting for members still in an earlier micro-batch).
  // Whether a layout bounded below by `floor` could still beat the best plan so far (else it is skipped).
  const auto below_best = [&best](double floor) {
    return !best || floor < best->predicted.iteration_seconds;
  };
  std::optional<std::pair<int, Variant>> best_own;  // the best plan's micro-batch count and variant
  // Every candidate partitions the same documents in the same order: sorted once (half a million documents
  // at 8192 GPUs x 64K tokens).
  const std::vector<int> order = zeppelin::longest_first(batch.lengths);
  const auto consider_own = [&](const int k, const Variant& v) {
    const zeppelin::PartitionOptions po = partition_options(k, v);
    const zeppelin::Partition part = zeppelin::partition(batch.lengths, order, cost_, po);
    nlohmann::json what = {{"layout", po.hierarchical ? "hierarchical" : "flat"},
                           {"micro_batches", k},
                           {"remap", v.remap},
                           {"balance", v.per_micro_batch ? "per-micro-batch" : "per-gpu"},
                           {"degrees", degrees_name(v.degrees)}};
    if (heads_auto_) what["heads"] = heads_name(v.heads);
    // Lowering and scheduling a layout costs far more than building it (a 1024-GPU candidate with wide
    // routed rings: 1.4 s of the planner's 1.9 s): one whose compute alone is no faster than the best plan
    // so far cannot win, so it is not lowered (predicted_floor, core/strategies/predict.hpp). Once there is
    // a best plan the floor is taken on the layout's sketch, before it is built whole: the same floor, for
    // a fraction of the build (the remap balanced per micro-batch at 8192 GPUs x 8K tokens: a 0.8 s build
    // of 1.7M ops, most of them ring hops, that the floor then skips).
    const auto skipped = [&](double floor) {
      if (below_best(floor)) return false;
      what["skipped"] = "compute floor above the best estimate";
      what["compute_floor_ms"] = floor * 1e3;
      tried.push_back(std::move(what));
      return true;
    };
    // Not the two degree rules that win at every scale measured (the paper's, balance, and tiled; per GPU,
    // unremapped): a sketch of them would only be built before the whole plan. Nor the flat partition of
    // rings, whose packed-CP floors (the same layout's compute) bound it before it is considered; its
    // head-parallel form is sketched, as USP's floor there bounds a shape, not the partition's groups
    // (github-256k with heads: auto: a 53 ms build of 0.16 s that the floor then skips).
    const bool contender = !v.remap && !v.per_micro_batch && v.flat == 0 &&
                           v.heads == zeppelin::HeadGroups::none &&
                           (v.degrees == zeppelin::Degrees::balance || v.degrees == zeppelin::Degrees::tiled);
    const bool flat_rings = v.flat > 0 && v.heads == zeppelin::HeadGroups::none;
    const bool sketch_first = best && part.oom.empty() && !contender && !flat_rings;
    if (sketch_first && skipped(predicted_floor(plan_partition(batch, part, k, v, true), cost_, passes_)))
      return false;
    plan::Plan p = part.oom.empty() ? plan_partition(batch, part, k, v, false)
                                    : oom_plan(cost_, system_.label, system_.name, batch.lengths, part.oom);
    if (p.feasible()) {
      if (!sketch_first && skipped(predicted_floor(p, cost_, passes_))) return false;
      predict(p, cost_, passes_);
    }
    note(p, std::move(what));
    const bool better =
        p.feasible() && (!best || p.predicted.iteration_seconds < best->predicted.iteration_seconds);
    if (better) {
      best = std::move(p);
      best_own = {k, v};
    } else if (!p.feasible() && !first_oom) {
      first_oom = std::move(p);
    }
    return better;
  };
  for (const int k : counts) {
    zeppelin::PartitionOptions po;
    po.routing = routing_;
    po.backward = passes_ == Passes::fwd_bwd;
    po.micro_batches = k;
    po.include_linear = true;
    if (remap_always_) {  // the paper's: always remapped, so only the degree rules are weighed
      for (const auto rule :
           {zeppelin::Degrees::balance, zeppelin::Degrees::tiled, zeppelin::Degrees::memory}) {
        if (rule == zeppelin::Degrees::balance || hierarchical_)
          consider_own(k, {true, true, rule, zeppelin::HeadGroups::none, 0});
      }
      if (best) break;
      continue;
    }
    Variant chosen{false, false, zeppelin::Degrees::balance, zeppelin::HeadGroups::none, 0};
    consider_own(k, chosen);
    if (hierarchical_) {
      std::vector<std::vector<int>> seen{zeppelin::ring_degrees(batch.lengths, cost_, po)};
      for (const auto rule : {zeppelin::Degrees::tiled, zeppelin::Degrees::memory}) {
        po.degrees = rule;
        auto degrees = zeppelin::ring_degrees(batch.lengths, cost_, po);
        if (std::find(seen.begin(), seen.end(), degrees) != seen.end()) continue;
        seen.push_back(std::move(degrees));
        if (consider_own(k, {false, false, rule, zeppelin::HeadGroups::none, 0})) chosen.degrees = rule;
      }
    }
    if (best) {
      const auto& ranks = best->predicted.per_rank;
      double most_tokens = 0, tokens = 0;
      for (const auto& rank : ranks) {
        most_tokens = std::max(most_tokens, static_cast<double>(rank.tokens));
        tokens += static_cast<double>(rank.tokens);
      }
      const double token_spread = tokens > 0 ? most_tokens * static_cast<double>(ranks.size()) / tokens : 1.0;
      // Of the best plan before the remap's candidate (which may replace it) is planned.
      const bool uneven = finish_spread(*best) > 1.05;
      if (remap_ && token_spread > 1.05)
        consider_own(k, {true, true, chosen.degrees, zeppelin::HeadGroups::none, 0});
      if (k > 1 && hierarchical_ && uneven)
        consider_own(k, {false, true, chosen.degrees, zeppelin::HeadGroups::none, 0});
      // Where the GPUs still finish apart, every sequence in one class: the flat partition over equal
      // groups inside a node as narrow as memory lets the longest sequence be (a divisor of the node),
      // balanced on each sequence's cost. When memory leaves local sequences too little room to even out
      // the GPUs beside the rings, spreading every sequence over its group does (the layout uniform CP
      // reaches, as the special case of the classes where each sequence is ringed). Not across nodes:
      // there every sequence's K/V would cross the NICs. Skipped, unplanned, where its compute alone
      // (the packed-CP floors: the layout is packed CP's at that degree) is no faster than the best plan.
      if (const int width = hierarchical_ && uneven ? flat_ring_width(batch.lengths) : 0; width > 1) {
        double floor = packed_cp_document_floor(cost_, batch.lengths, width, passes_);
        if (below_best(floor)) floor = packed_cp_compute_floor(cost_, batch.lengths, width, passes_);
        if (below_best(floor))
          consider_own(k, {false, false, zeppelin::Degrees::balance, zeppelin::HeadGroups::none, width});
      }
    }
    if (best) break;
  }
  // heads: auto, beyond the paper: the best plan's partition with every group head-parallel where it
  // fits; every sequence the paper's rule would ring inside a node on the whole node instead, head-parallel
  // (splitting heads over the node balances it exactly); and the flat partition over equal groups, each
  // head-parallel. The estimate keeps the rings where they are faster. (Turning only the inter-node groups
  // head-parallel, also splitting each node's local sequences over the node, and the memory degree rule
  // with heads split were weighed too until none of them was the best plan in any iteration of the paper
  // library, the grid and the long-context scenarios: planning them cost time for nothing.)
  if (heads_auto_ && best_own) {
    const auto [k, v] = *best_own;
    Variant h = v;
    h.heads = zeppelin::HeadGroups::all;
    consider_own(k, h);
    if (hierarchical_) {
      if (v.degrees != zeppelin::Degrees::node)
        consider_own(k, {v.remap, v.per_micro_batch, zeppelin::Degrees::node, zeppelin::HeadGroups::all, 0});
      // Every sequence on one of equal groups of GPUs, head-parallel: the flat partition over groups
      // as wide as the narrowest head-parallel group that holds the longest sequence (u-groups of whole
      // nodes' GPUs, a ring of head slices between them: USP's shape rule). Where most of the work is
      // in sequences longer than a node, splitting every sequence's heads balances each group exactly,
      // which no placement of whole rings does; the groups are balanced on their sequences' cost, the
      // ring's inter-node hops routed.
      const UlyssesSetup shape = ulysses_shape(
          UlyssesSetup{system_.label, system_.name, 1, 1, passes_, Dealing::balanced, usp_kv_heads_}, cost_,
          usp_degrees_, batch.lengths, 0, 0);
      // Not planned where USP's compute floor at that shape (the layout is USP's) is above the best plan.
      // Neither evenness (where the best ring plan's GPUs finish within 5 % of each other it still won by
      // 12 %: a800x16-llama7b-bimodal-long-256k) nor memory keeping some of its groups rings (such plans
      // still won there and on h800x8-llama7b-bimodal-long-256k) rules it out.
      const int width = shape.degree * shape.ring;
      if (width > 1 && cost_.cluster().world_size() % width == 0 &&
          below_best(ulysses_compute_floor(shape, cost_, batch.lengths)))
        consider_own(k, {false, false, zeppelin::Degrees::balance, zeppelin::HeadGroups::all, width});
    }
  }
  // A baseline's layout that beats every plan so far; `winner` names it (empty: the own partition).
  std::string winner;
  auto consider = [&](plan::Plan p, const std::string& layout) {
    if (p.feasible() && (!best || p.predicted.iteration_seconds < best->predicted.iteration_seconds)) {
      best = std::move(p);
      winner = layout;
    }
  };
  if (best_of_) {
    for (const int degree : zeppelin::baseline_shape_degrees(cost_, batch.lengths)) {
      // Planning a layout costs far more than bounding it: skip one whose compute alone is no faster,
      // asking the O(documents) bounds (its costliest document, then its average group) before the dealt
      // one.
      double floor = packed_cp_document_floor(cost_, batch.lengths, degree, passes_);
      if (below_best(floor)) floor = packed_cp_average_floor(cost_, batch.lengths, degree, passes_);
      if (below_best(floor)) floor = packed_cp_compute_floor(cost_, batch.lengths, degree, passes_);
      if (!below_best(floor)) {
        tried.push_back({{"layout", "packed-cp"},
                         {"degree", degree},
                         {"skipped", "compute floor above the best estimate"},
                         {"compute_floor_ms", floor * 1e3}});
        continue;
      }
      PackedCpSetup setup{system_.label, system_.name, degree, passes_, Dealing::balanced};
      plan::Plan p = plan_packed_cp(setup, cost_, batch.lengths);
      note(p, {{"layout", "packed-cp"}, {"degree", degree}});
      consider(std::move(p), "packed-cp");
    }
    // hybrid-dp's layout: whole documents where they fit, the smallest ring that holds the rest; skipped,
    // as a packed layout is, when its compute alone is no faster than the best plan so far (the costliest
    // document's bound first, then the assignment's).
    // The layout under Zeppelin's own cost model (the oracle form): Zeppelin estimates with it throughout.
    const HybridDpSetup hdp{system_.label, system_.name, passes_, HybridDpForm::oracle};
    double floor = hybrid_dp_document_floor(hdp, cost_, batch.lengths);
    if (below_best(floor)) floor = hybrid_dp_compute_floor(hdp, cost_, batch.lengths);
    if (!below_best(floor)) {
      tried.push_back({{"layout", "hybrid-dp"},
                       {"skipped", "compute floor above the best estimate"},
                       {"compute_floor_ms", floor * 1e3}});
    } else {
      plan::Plan p = plan_hybrid_dp(hdp, cost_, batch.lengths);
      note(p, {{"layout", "hybrid-dp"}});
      consider(std::move(p), "hybrid-dp");
    }
    // USP's layout at its automatic shape, when that splits heads (u >= 2): splitting a long document's
    // heads inside a node balances its attention exactly, which no ring partition does. At u = 1 it is the
    // packed-CP layout of degree r, planned above.
    const UlyssesSetup usp = ulysses_shape(
        UlyssesSetup{system_.label, system_.name, 1, 1, passes_, Dealing::balanced, usp_kv_heads_}, cost_,
        usp_degrees_, batch.lengths, 0, 0);
    if (usp.degree > 1) {
      const double usp_floor = ulysses_compute_floor(usp, cost_, batch.lengths);
      if (!below_best(usp_floor)) {
        tried.push_back({{"layout", "usp"},
                         {"degree", usp.degree},
                         {"ring", usp.ring},
                         {"skipped", "compute floor above the best estimate"},
                         {"compute_floor_ms", usp_floor * 1e3}});
      } else {
        plan::Plan p = plan_ulysses(usp, cost_, batch.lengths);
        note(p, {{"layout", "usp"}, {"degree", usp.degree}, {"ring", usp.ring}});
        consider(std::move(p), "usp");
      }
    }
  }
  plan::Plan out = best ? std::move(*best) : std::move(*first_oom);
  if (!winner.empty()) {
    // The engine runs the baseline's layout as it is. Its facts move under one key ("packed_cp",
    // "hybrid_dp", "usp") so that they are not read as Zeppelin's own options.
    nlohmann::json facts = std::move(out.info);
    out.info = nlohmann::json::object();
    out.info["layout"] = winner;
    std::string key = winner;
    std::replace(key.begin(), key.end(), '-', '_');
    // An MoE plan's layer facts stay where the run and the reports read them.
    if (facts.contains("moe_layer")) {
      out.info["moe_layer"] = std::move(facts["moe_layer"]);
      facts.erase("moe_layer");
    }
    out.info[key] = std::move(facts);
  } else {
    const int k = out.micro_batches;
    if (out.feasible() && k > first_k) {
      out.info["fallback"] = "micro-batches raised from " + std::to_string(first_k) + " to " +
                             std::to_string(k) + " to fit memory";
    }
  }
  out.info["candidates"] = std::move(tried);
  return out;
}

// With best_of the system is a selector over Zeppelin's plan and the baselines' layouts, and its label
// says so: "best-of(zeppelin,packed-cp,hybrid-dp,usp)", the own options inside as usual.
std::string best_of_label(const nlohmann::json& options) {
  if (!options.value("best_of", false)) return {};
  std::string own;
  for (const char* key : {"routing", "remap", "partitioning", "remap_policy", "heads"}) {
    const nlohmann::json& value = options.at(key);
    const std::string name = key;
    const bool is_default = name == "partitioning"   ? value == "hierarchical"
                            : name == "remap_policy" ? value == "where-it-pays"
                            : name == "heads"        ? value == "ring"
                                                     : value == true;
    if (is_default) continue;
    if (!own.empty()) own += ',';
    own += std::string(key) + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
  }
  return "best-of(zeppelin" + (own.empty() ? "" : "[" + own + "]") + ",packed-cp,hybrid-dp,usp)";
}

std::unique_ptr<Strategy> make_zeppelin(const SystemSpec& system, const Scenario& scenario,
                                        const CostModel& cost) {
  return std::make_unique<Zeppelin>(system, scenario, cost);
}

// Order 0: listed first; the one system that is not a baseline.
const StrategyRegistration registration{
    SystemInfo{
        .name = "zeppelin",
        .description =
            "Zeppelin: hierarchical sequence partitioning, NIC routing layer, token remapping (EuroSys 2026)",
        .order = 0,
        .baseline = false,
        .options =
            {SystemOption{
                 .name = "routing",
                 .type = OptionType::boolean,
                 .default_value = true,
                 .choices = {},
                 .description = "spread inter-node transfers over every NIC of the node through proxy GPUs"},
             SystemOption{.name = "remap",
                          .type = OptionType::boolean,
                          .default_value = true,
                          .choices = {},
                          .description = "move tokens to a token-balanced layout for the linear modules"},
             SystemOption{
                 .name = "partitioning",
                 .type = OptionType::choice,
                 .default_value = "hierarchical",
                 .choices = {"hierarchical", "flat"},
                 .description =
                     "hierarchical: local / intra-node / inter-node classes; flat: one level (ablation)"},
             SystemOption{.name = "remap_policy",
                          .type = OptionType::choice,
                          .default_value = "where-it-pays",
                          .choices = {"where-it-pays", "always"},
                          .description =
                              "with remap: where-it-pays weighs remapped and unremapped layouts by "
                              "the estimate; always remaps every micro-batch (the paper)"},
             SystemOption{.name = "heads",
                          .type = OptionType::choice,
                          .default_value = "ring",
                          .choices = {"ring", "auto"},
                          .description =
                              "ring: the paper's rings; auto (beyond the paper): a ring may run "
                              "head-parallel (Ulysses inside a node, USP across nodes) where the estimate "
                              "says it pays"},
             SystemOption{.name = "best_of",
                          .type = OptionType::boolean,
                          .default_value = false,
                          .choices = {},
                          .description =
                              "a selector, not Zeppelin: also plan the baselines' layouts (packed CP up to a "
                              "node, hybrid-dp, USP) and run whichever has the least estimated time"}},
        .validate = {},
        .label = best_of_label,
    },
    make_zeppelin};

}  // namespace
}  // namespace zb
