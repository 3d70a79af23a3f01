// hydraulis: Hydraulis's heterogeneous parallel groups with two-stage data assignment (Li, Fu et al.,
// SIGMOD 2025; related-systems.md §2.1 and §5 B5). Each iteration weighs a pool of group-size multisets
// (hydraulis_pool); for each, stage 1 dispatches documents to groups minimising the largest group time
// and stage 2 packs each group's documents into micro-batches (hydraulis_dispatch); the candidate with
// the least stage 2 estimate is planned. By default ("groups": "tensor", as published) a group is a model
// replica with tensor parallelism of its width (Megatron TP with sequence parallelism), so the plan has
// TP groups of different widths side by side; "groups": "context" keeps the earlier variant, zigzag
// ring-CP groups, which compares assignment policy alone. See docs/STRATEGIES.md "hydraulis".
#include <algorithm>
#include <bit>
#include <numeric>
#include <string>

#include "core/common/rng.hpp"
#include "core/strategies/dynamic_cp_ring.hpp"
#include "core/strategies/hydraulis_dispatch.hpp"
#include "core/strategies/hydraulis_milp.hpp"
#include "core/strategies/predict.hpp"
#include "core/strategies/registration.hpp"
#include "core/strategies/tensor_parallel.hpp"

namespace zb {
namespace {

// Hetu shuffles 100 times per candidate; here the longest-first order is tried for every candidate and
// the seeded shuffles only for the candidates stage 1 ranks best, which keeps planning within
// milliseconds (docs/STRATEGIES.md says why).
constexpr int kRestarts = 8;
constexpr std::size_t kShortlist = 4;  // candidates given the restarts and stage 2
// Stage 2's MILP per solve: a deterministic node budget (the same plan on every machine; "milp_nodes",
// "auto" = kMilpNodes) inside Hetu's 0.5 s time limit, which only a much slower machine reaches first.
constexpr int kMilpNodes = 100;
constexpr double kMilpSeconds = 0.5;
constexpr double kMilpCritical = 0.02;  // groups whose LPT objective is this close to the largest

int milp_nodes(const nlohmann::json& option) {
  return option.is_number_integer() ? option.get<int>() : kMilpNodes;
}

// "1x8 + 2x4": how many groups of each size, in GPUs (`scale`: the scenario's TP under the grid), for
// info (a pool of 128 GPUs lists up to 128 sizes).
std::string describe(const std::vector<int>& sizes, int scale) {
  std::string out;
  for (std::size_t i = 0; i < sizes.size();) {
    std::size_t j = i;
    while (j < sizes.size() && sizes[j] == sizes[i]) ++j;
    out += (out.empty() ? "" : " + ") + std::to_string(j - i) + "x" + std::to_string(sizes[i] * scale);
    i = j;
  }
  return out;
}

// A cluster whose "GPUs" are the `replicas` model replicas, for writing the plan before it is expanded to
// the replicas' TP members: one node, one NIC (replicas never talk to each other).
ClusterSpec replica_grid(const ClusterSpec& cluster, int replicas) {
  ClusterSpec grid = cluster;
  grid.nodes = 1;
  grid.gpus_per_node = replicas;
  grid.nics_per_node = 1;
  grid.gpu_to_nic.assign(static_cast<std::size_t>(replicas), 0);
  return grid;
}

struct Candidate {
  std::vector<int> sizes;  // descending; groups sit on consecutive GPUs in this order
  Dispatch dispatch;
  std::vector<Packing> packing;  // per group
  double estimate = 0;           // stage 2: the largest group's objective
};

class Hydraulis final : public Strategy {
 public:
  Hydraulis(const SystemSpec& system, const Scenario& scenario, const CostModel& cost)
      : system_(system.label),
        strategy_(system.name),
        passes_(scenario.passes),
        seed_(scenario.seed),
        groups_(system.options.at("groups") == "context" ? HydraulisGroups::context
                                                         : HydraulisGroups::tensor),
        solver_{system.options.at("stage2") == "milp" && min_max_packing_solver_available(),
                milp_nodes(system.options.at("milp_nodes")), kMilpSeconds},
        scale_(std::max(1, scenario.parallelism.tensor)),
        cost_(cost) {}

  plan::Plan make_plan(const Batch& batch) const override {
    const std::vector<std::int64_t>& lengths = batch.lengths;
    const int world = cost_.cluster().world_size();
    const HydraulisCosts costs(cost_, lengths, passes_, groups_);
    const int widest = groups_ == HydraulisGroups::tensor
                           ? costs.widest()
                           : static_cast<int>(std::bit_floor(static_cast<unsigned>(world)));
    for (std::size_t d = 0; d < lengths.size(); ++d) {
      if (costs.fits(static_cast<int>(d), widest)) continue;
      // Longer than the widest group holds: an OOM naming the document, never a split.
      const std::int64_t m = costs.capacity(widest);
      const bool tensor = groups_ == HydraulisGroups::tensor;
      plan::Plan p =
          oom_plan(cost_, system_, strategy_, lengths, {{0, 0, costs.share(static_cast<int>(d), widest), m}});
      p.info["oversized_document"] = {
          {"index", d}, {"length", lengths[d]}, {"capacity_tokens", tensor ? m : m * widest}};
      if (tensor) p.info["oversized_document"]["widest_tensor_parallel"] = widest * scale_;
      return p;
    }
    // Hetu keeps the candidate with the least stage 2 estimate; so does this (the earlier on ties), ranking
    // by LPT's packing; the chosen candidate's groups are then solved by the MILP (stage2 "milp").
    const std::vector<Candidate> shortlist = shortlisted(costs, world);
    Candidate chosen = shortlist.front();
    if (solver_.milp) {
      // Only the groups that set the estimate (within kMilpCritical of the largest objective) can change
      // the iteration; the rest finish earlier whatever their packing, and solving them would multiply the
      // planning time by the number of groups.
      const double critical = chosen.estimate * (1 - kMilpCritical);
      chosen.estimate = 0;
      for (std::size_t g = 0; g < chosen.sizes.size(); ++g) {
        if (chosen.packing[g].seconds >= critical)
          chosen.packing[g] = pack_group(costs, chosen.sizes[g], chosen.dispatch.group_docs[g], solver_);
        chosen.estimate = std::max(chosen.estimate, chosen.packing[g].seconds);
      }
    }
    return build(lengths, chosen, shortlist);
  }

 private:
  // Stage 1 in longest-first order for the whole pool; the best kShortlist get the seeded restarts and
  // stage 2; sorted by the stage 2 estimate (pool order on ties). Candidates leaving a group idle are
  // dropped, as Hetu does, unless every candidate does (fewer documents than any pool's groups).
  std::vector<Candidate> shortlisted(const HydraulisCosts& costs, int world) const {
    std::vector<int> longest_first(costs.documents());
    std::iota(longest_first.begin(), longest_first.end(), 0);
    std::stable_sort(longest_first.begin(), longest_first.end(),
                     [&](int a, int b) { return costs.time(a, 1) > costs.time(b, 1); });
    std::vector<Candidate> all;
    for (const bool allow_idle : {false, true}) {
      for (std::vector<int>& sizes : groups_ == HydraulisGroups::tensor
                                         ? hydraulis_pool(world, costs.widest())
                                         : hydraulis_pool(world)) {
        if (auto d = dispatch_documents(costs, sizes, longest_first, allow_idle))
          all.push_back({std::move(sizes), std::move(*d), {}, 0});
      }
      if (!all.empty()) break;
    }
    std::stable_sort(all.begin(), all.end(), [](const Candidate& a, const Candidate& b) {
      return a.dispatch.makespan < b.dispatch.makespan;
    });
    if (all.size() > kShortlist) all.resize(kShortlist);
    const bool allow_idle = std::any_of(all.begin(), all.end(), [](const Candidate& c) {
      return std::any_of(c.dispatch.group_docs.begin(), c.dispatch.group_docs.end(),
                         [](const auto& g) { return g.empty(); });
    });
    for (Candidate& c : all) {
      for (int r = 1; r < kRestarts; ++r) {
        const std::vector<int> order = shuffled(costs.documents(), r);
        auto d = dispatch_documents(costs, c.sizes, order, allow_idle);
        if (d && d->makespan < c.dispatch.makespan) c.dispatch = std::move(*d);
      }
      for (std::size_t g = 0; g < c.sizes.size(); ++g) {
        c.packing.push_back(pack_group(costs, c.sizes[g], c.dispatch.group_docs[g]));
        c.estimate = std::max(c.estimate, c.packing.back().seconds);
      }
    }
    std::stable_sort(all.begin(), all.end(),
                     [](const Candidate& a, const Candidate& b) { return a.estimate < b.estimate; });
    return all;
  }

  // Restart r's order: a Fisher–Yates shuffle seeded by the scenario seed and r, as Hetu seeds each trial.
  std::vector<int> shuffled(std::size_t n, int restart) const {
    std::vector<int> order(n);
    std::iota(order.begin(), order.end(), 0);
    Rng rng(seed_, static_cast<std::uint64_t>(restart));
    for (std::size_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
    return order;
  }

  // Groups on consecutive GPUs in descending size (so each sits at a multiple of its size), their packs
  // written micro-batch by micro-batch; groups never share a GPU, so no two of them wait on each other.
  // Context groups: a zigzag ring over the group's GPUs. Tensor groups: the replica's layer as one rank of
  // a grid of replicas, then expanded to its TP members (expand_tensor_parallel with a width per replica),
  // which adds the sequence-parallel collectives and splits heads and GEMMs.
  plan::Plan build(const std::vector<std::int64_t>& lengths, const Candidate& chosen,
                   const std::vector<Candidate>& shortlist) const {
    const bool tensor = groups_ == HydraulisGroups::tensor;
    const auto replicas = static_cast<int>(chosen.sizes.size());
    const CostModel grid_cost = tensor ? cost_.with_cluster(replica_grid(cost_.cluster(), replicas)) : cost_;
    PlanBuilder b(grid_cost, system_, strategy_);
    b.set_passes(passes_);
    std::vector<int> last_op(static_cast<std::size_t>(b.world_size()), -1);
    std::vector<int> first_rank(chosen.sizes.size(), 0);
    for (std::size_t g = 1; g < chosen.sizes.size(); ++g)
      first_rank[g] = first_rank[g - 1] + (tensor ? 1 : chosen.sizes[g - 1]);
    std::size_t micro_batches = 0, packs = 0;
    for (const Packing& p : chosen.packing)
      micro_batches = std::max(micro_batches, p.packs.size()), packs += p.packs.size();
    for (std::size_t mb = 0; mb < micro_batches; ++mb) {
      for (std::size_t g = 0; g < chosen.sizes.size(); ++g) {
        if (mb >= chosen.packing[g].packs.size()) continue;
        std::vector<int> seqs;
        for (const int d : chosen.packing[g].packs[mb])
          seqs.push_back(b.add_sequence(lengths[static_cast<std::size_t>(d)], static_cast<int>(mb)));
        std::vector<int> ranks(static_cast<std::size_t>(tensor ? 1 : chosen.sizes[g]));
        std::iota(ranks.begin(), ranks.end(), first_rank[g]);
        add_ring_layer(b, ranks, std::move(seqs), static_cast<int>(mb), last_op);
      }
    }
    b.set_micro_batches(std::max<int>(1, static_cast<int>(micro_batches)));
    b.add_info("group_parallelism", tensor ? "tensor" : "context");
    b.add_info("groups", describe(chosen.sizes, scale_));
    b.add_info("packs", packs);
    b.add_info("stage1_makespan_seconds", chosen.dispatch.makespan);
    b.add_info("stage2_estimate_seconds", chosen.estimate);
    b.add_info("stage2_solver", solver_.milp ? "milp" : "lpt");
    if (solver_.milp) {
      int solves = 0, improved = 0, proven = 0;
      double wall = 0;
      for (const Packing& p : chosen.packing)
        solves += p.milp_solves, improved += p.milp_improved, proven += p.milp_proven, wall += p.milp_wall;
      b.add_info("stage2_milp", {{"solves", solves},
                                 {"improved_on_lpt", improved},
                                 {"proven_optimal", proven},
                                 {"node_limit", solver_.node_limit},
                                 {"seconds", wall}});
    }
    nlohmann::json weighed = nlohmann::json::array();
    for (const Candidate& c : shortlist)
      weighed.push_back({{"groups", describe(c.sizes, scale_)}, {"stage2_estimate_seconds", c.estimate}});
    b.add_info("shortlist", std::move(weighed));
    if (!tensor) return b.finish();
    plan::Plan p = expand_tensor_parallel(b.finish_unpredicted(), cost_, chosen.sizes);
    predict(p, cost_, passes_);
    return p;
  }

  std::string system_;
  std::string strategy_;
  Passes passes_;
  std::uint64_t seed_;
  HydraulisGroups groups_;
  Stage2Solver solver_;
  int scale_;  // the scenario's TP: a grid "GPU" is that many GPUs
  const CostModel& cost_;
};

// A node budget only means something to the MILP: with "stage2": "lpt" it would be silently ignored.
std::vector<OptionProblem> check_stage2(const nlohmann::json& options, const SystemCheckContext&) {
  if (options.at("stage2") == "lpt" && options.at("milp_nodes").is_number_integer())
    return {{"milp_nodes", "milp_nodes applies to stage2 \"milp\" only, and stage2 is \"lpt\"",
             "drop milp_nodes, or set stage2 to \"milp\""}};
  return {};
}

std::unique_ptr<Strategy> make_hydraulis(const SystemSpec& system, const Scenario& scenario,
                                         const CostModel& cost) {
  return std::make_unique<Hydraulis>(system, scenario, cost);
}

const StrategyRegistration registration{
    SystemInfo{
        .name = "hydraulis",
        .description =
            "Hydraulis: model replicas of different tensor-parallel widths (powers of two summing to N) "
            "with two-stage assignment: documents dispatched to replicas by min-max time, then packed "
            "into micro-batches per replica",
        .order = 60,
        .baseline = true,
        .options = {SystemOption{
                        .name = "stage2",
                        .type = OptionType::choice,
                        .default_value = "milp",
                        .choices = {"milp", "lpt"},
                        .description = "milp: the chosen candidate's packing solved as Hetu's MILP (CBC), "
                                       "LPT where the build has no CBC; lpt: LPT only",
                    },
                    SystemOption{
                        .name = "milp_nodes",
                        .type = OptionType::positive_int_or_auto,
                        .default_value = "auto",
                        .choices = {},
                        .description = "branch-and-bound nodes per MILP solve (deterministic, inside Hetu's "
                                       "0.5 s limit); auto = 100",
                    },
                    SystemOption{
                        .name = "groups",
                        .type = OptionType::choice,
                        .default_value = "tensor",
                        .choices = {"tensor", "context"},
                        .description =
                            "tensor: replicas of heterogeneous TP width with sequence parallelism (as "
                            "published); context: ring-CP groups of heterogeneous size (assignment policy "
                            "only)",
                    }},
        .validate = check_stage2,
        .label = {},
    },
    make_hydraulis};

}  // namespace
}  // namespace zb
