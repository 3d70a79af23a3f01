// zeppelin: hierarchical sequence partitioning, an attention engine running rings of different degrees
// side by side (queues inter-node → intra-node → local), the routing layer for inter-node hops and the
// remapping layer to a token-balanced linear layout. Options: routing, remap, partitioning
// (hierarchical | flat) and baseline_shapes, for ablations. See docs/STRATEGIES.md.
//
// The planner never settles for less than a baseline could do on the same batch: when a micro-batch does
// not fit it retries with more micro-batches, and it also plans the packed-CP layouts of the fixed-degree
// baselines (core/strategies/zeppelin/baseline_shapes.hpp), hybrid-dp's and USP's, keeping the plan with
// the least estimated time. Every plan tried (with its estimate) is in the plan's info, and which layout won.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <string>

#include "core/strategies/hybrid_dp_layout.hpp"
#include "core/strategies/packed_cp.hpp"
#include "core/strategies/plan_builder.hpp"
#include "core/strategies/registration.hpp"
#include "core/strategies/ulysses.hpp"
#include "core/strategies/zeppelin/baseline_shapes.hpp"
#include "core/strategies/zeppelin/layout_choice.hpp"
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
    baseline_shapes_ = o.at("baseline_shapes").get<bool>();
    const int t = std::max(1, scenario.parallelism.tensor);
    usp_kv_heads_ = std::max(1, cost.model().kv_heads / t);
    usp_degrees_ = ulysses_degrees(cost, t);
  }

  plan::Plan make_plan(const Batch& batch) const override;

 private:
  // The micro-batch count memory suggests: ⌈tokens / (fill · world · per-GPU capacity)⌉.
  int memory_micro_batches(const std::vector<std::int64_t>& lengths) const;
  // Splits the batch into k micro-batches, balancing tokens (longest first to the lightest).
  static std::vector<std::vector<std::int64_t>> split_micro_batches(const std::vector<std::int64_t>& lengths,
                                                                    int k);
  // Zeppelin's own plan of the batch as k micro-batches (an OOM plan when one does not fit).
  plan::Plan plan_hierarchical(const Batch& batch, int k) const;
  // Appends one micro-batch to the plan; returns its OOM reports (empty = it fits).
  std::vector<plan::OomReport> plan_micro_batch(PlanBuilder& b, const std::vector<std::int64_t>& lengths,
                                                int mb, std::vector<int>& last_op, zeppelin::Router& router,
                                                nlohmann::json& facts) const;

  SystemSpec system_;
  Passes passes_;
  const CostModel& cost_;
  bool routing_ = true, remap_ = true, hierarchical_ = true, baseline_shapes_ = true;
  int usp_kv_heads_ = 1;          // K/V heads per TP rank, for USP's layout
  std::vector<int> usp_degrees_;  // the Ulysses degrees usable here, ascending
};

int Zeppelin::memory_micro_batches(const std::vector<std::int64_t>& lengths) const {
  const double capacity =
      static_cast<double>(cost_.token_capacity_per_gpu()) * cost_.cluster().world_size() * micro_batch_fill;
  const double total = std::accumulate(lengths.begin(), lengths.end(), 0.0);
  return static_cast<int>(std::max(1.0, std::ceil(total / std::max(1.0, capacity))));
}

std::vector<std::vector<std::int64_t>> Zeppelin::split_micro_batches(const std::vector<std::int64_t>& lengths,
                                                                     int k) {
  std::vector<std::vector<std::int64_t>> mbs(static_cast<std::size_t>(k));
  std::vector<std::int64_t> tokens(static_cast<std::size_t>(k), 0);
  std::vector<std::size_t> order(lengths.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return lengths[a] > lengths[b]; });
  for (auto d : order) {
    const auto m = static_cast<std::size_t>(std::min_element(tokens.begin(), tokens.end()) - tokens.begin());
    mbs[m].push_back(lengths[d]);
    tokens[m] += lengths[d];
  }
  return mbs;
}

std::vector<plan::OomReport> Zeppelin::plan_micro_batch(PlanBuilder& b,
                                                        const std::vector<std::int64_t>& lengths, int mb,
                                                        std::vector<int>& last_op, zeppelin::Router& router,
                                                        nlohmann::json& facts) const {
  const int world = b.world_size();
  zeppelin::PartitionOptions po;
  po.routing = routing_;
  po.hierarchical = hierarchical_;
  po.backward = passes_ == Passes::fwd_bwd;
  zeppelin::LayoutChoice choice = zeppelin::choose_layout(lengths, cost_, po, remap_, mb);
  const zeppelin::Partition& part = choice.partition;
  facts.push_back({{"micro_batch", mb},
                   {"remap", choice.remap},
                   {"estimate_with_remap_ms", choice.with_remap_seconds * 1e3},
                   {"estimate_without_remap_ms", choice.without_remap_seconds * 1e3},
                   {"hide_nvlink_tokens", part.thresholds.hide_nvlink_tokens},
                   {"hide_internode_tokens", part.thresholds.hide_internode_tokens},
                   {"local_below", part.thresholds.local_below},
                   {"inter_from", part.thresholds.inter_from},
                   {"load_target_ms", part.thresholds.load_target_seconds * 1e3}});
  if (!part.oom.empty()) return part.oom;

  std::vector<int> seq_of(lengths.size());
  for (std::size_t d = 0; d < lengths.size(); ++d) seq_of[d] = b.add_sequence(lengths[d], mb);
  std::vector<int> group_ids;
  for (const auto& g : part.groups) {
    std::vector<int> seqs;
    for (int d : g.docs) seqs.push_back(seq_of[static_cast<std::size_t>(d)]);
    group_ids.push_back(b.add_group(g.level, g.ranks, seqs, mb));
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
      choice.remap ? zeppelin::balance_tokens(attn, b.plan().gpus_per_node) : zeppelin::RemapPlan{attn, {}};

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
  // Engine queues: the partition lists inter-node groups first, then intra-node, then local.
  std::vector<std::vector<int>> attn_ops(static_cast<std::size_t>(world));
  const auto route = [&](int src, int dst, std::int64_t bytes, int step) {
    return routing_ ? router.route(src, dst, bytes, mb * 1'000'000 + step) : plan::Route{};
  };
  for (int gid : group_ids) {
    const plan::Group g = b.plan().groups[static_cast<std::size_t>(gid)];
    std::vector<int> group_ready;
    for (int r : g.ranks) group_ready.push_back(ready[static_cast<std::size_t>(r)]);
    const auto ids = b.add_attention(gid, group_ready, route);
    for (std::size_t i = 0; i < g.ranks.size(); ++i) {
      auto& mine = attn_ops[static_cast<std::size_t>(g.ranks[i])];
      mine.insert(mine.end(), ids[i].begin(), ids[i].end());
    }
  }
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
  std::vector<plan::RankLayout> linear = b.plan().linear_layout;
  for (int r = 0; r < world; ++r) {
    auto& dst = linear[static_cast<std::size_t>(r)].shards;
    dst.insert(dst.end(), remap.linear[static_cast<std::size_t>(r)].begin(),
               remap.linear[static_cast<std::size_t>(r)].end());
  }
  b.set_linear_layout(std::move(linear));
  std::vector<plan::RemapMove> moves = b.plan().remap;
  moves.insert(moves.end(), remap.moves.begin(), remap.moves.end());
  b.set_remap(std::move(moves));
  return {};
}

plan::Plan Zeppelin::plan_hierarchical(const Batch& batch, int k) const {
  PlanBuilder b(cost_, system_.label, system_.name);
  b.set_passes(passes_);
  zeppelin::Router router(cost_.cluster());
  std::vector<int> last_op(static_cast<std::size_t>(cost_.cluster().world_size()), -1);
  nlohmann::json facts = nlohmann::json::array();
  const auto mbs = split_micro_batches(batch.lengths, k);
  for (std::size_t mb = 0; mb < mbs.size(); ++mb) {
    auto oom = plan_micro_batch(b, mbs[mb], static_cast<int>(mb), last_op, router, facts);
    if (!oom.empty()) return oom_plan(cost_, system_.label, system_.name, batch.lengths, std::move(oom));
  }
  b.set_micro_batches(static_cast<int>(mbs.size()));
  b.add_info("layout", hierarchical_ ? "hierarchical" : "flat");
  b.add_info("routing", routing_);
  b.add_info("remap", remap_);
  b.add_info("partitioning", hierarchical_ ? "hierarchical" : "flat");
  b.add_info("thresholds", facts);
  return b.finish();
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
  for (const int k : counts) {
    plan::Plan p = plan_hierarchical(batch, k);
    note(p, {{"layout", hierarchical_ ? "hierarchical" : "flat"}, {"micro_batches", k}});
    if (p.feasible()) {
      best = std::move(p);
      break;
    }
    if (!first_oom) first_oom = std::move(p);
  }
  // A baseline's layout that beats every plan so far; `winner` names it (empty: the own partition).
  std::string winner;
  auto consider = [&](plan::Plan p, const std::string& layout) {
    if (p.feasible() && (!best || p.predicted.iteration_seconds < best->predicted.iteration_seconds)) {
      best = std::move(p);
      winner = layout;
    }
  };
  // Whether a layout bounded below by `floor` could still beat the best plan so far (else it is skipped).
  const auto below_best = [&best](double floor) {
    return !best || floor < best->predicted.iteration_seconds;
  };
  if (baseline_shapes_) {
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
    const HybridDpSetup hdp{system_.label, system_.name, passes_};
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
             SystemOption{.name = "baseline_shapes",
                          .type = OptionType::boolean,
                          .default_value = true,
                          .choices = {},
                          .description =
                              "also plan the baselines' layouts (packed CP up to a node, hybrid-dp) "
                              "and keep whichever plan has the least estimated time"}},
        .validate = {},
    },
    make_zeppelin};

}  // namespace
}  // namespace zb
