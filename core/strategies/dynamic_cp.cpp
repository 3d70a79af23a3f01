// dynamic-cp: Megatron-LM's dynamic context parallelism. Each document gets at least a CP size of the
// next power of two of ⌈s / max_seqlen_per_rank⌉. By default ("schedule": "packing-aware") it is run as
// current Megatron-LM does (DefaultDynamicCPScheduler, dynamic_cp_packing): every micro-batch spans all
// GPUs in aligned power-of-two groups, each group's documents packed into one THD micro-batch on a zigzag
// ring over the group. "per-document" keeps Megatron-Core's earlier BalancedCPScheduler
// (dynamic_cp_schedule): rounds of groups, every document its own micro-batch. See docs/STRATEGIES.md
// "dynamic-cp".
#include <algorithm>
#include <bit>
#include <numeric>
#include <string>

#include "core/strategies/dynamic_cp_packing.hpp"
#include "core/strategies/dynamic_cp_ring.hpp"
#include "core/strategies/dynamic_cp_schedule.hpp"
#include "core/strategies/registration.hpp"

namespace zb {
namespace {

class DynamicCp final : public Strategy {
 public:
  DynamicCp(const SystemSpec& system, const Scenario& scenario, const CostModel& cost)
      : system_(system.label),
        strategy_(system.name),
        passes_(scenario.passes),
        packing_aware_(system.options.at("schedule") == "packing-aware"),
        cost_(cost) {
    const nlohmann::json& per_rank = system.options.at("max_seqlen_per_rank");
    max_per_rank_ =
        per_rank.is_number_integer() ? per_rank.get<std::int64_t>() : cost.token_capacity_per_gpu();
  }

  plan::Plan make_plan(const Batch& batch) const override {
    const std::vector<std::int64_t>& lengths = batch.lengths;
    const int world = cost_.cluster().world_size();
    const std::int64_t capacity = cost_.token_capacity_per_gpu();
    // A document whose CP size exceeds the world, or whose share does not fit a GPU (max_seqlen_per_rank
    // set above the capacity), is an OOM naming it, before any scheduling. CP sizes are powers of two, so
    // the widest group is the largest power of two ≤ world and the longest document max_seqlen_per_rank
    // times that.
    const int widest = static_cast<int>(std::bit_floor(static_cast<unsigned>(world)));
    if (max_per_rank_ <= 0 && !lengths.empty()) {
      // The model's weights and optimizer state leave no room for a single token on a GPU (the default
      // max_seqlen_per_rank is that capacity): every document is out of memory, the first one says so.
      plan::Plan out = oom_plan(cost_, system_, strategy_, lengths, {{0, 0, lengths.front(), capacity}});
      out.info["oversized_document"] = {{"index", 0},
                                        {"length", lengths.front()},
                                        {"max_seqlen_per_rank", max_per_rank_},
                                        {"capacity_tokens", capacity}};
      return out;
    }
    for (std::size_t d = 0; d < lengths.size(); ++d) {
      const int p = dynamic_cp_size(lengths[d], max_per_rank_);
      const bool too_wide = p > widest;
      const std::int64_t share = ring_share_tokens(lengths[d], too_wide ? widest : p);
      if (!too_wide && share <= capacity) continue;
      const std::int64_t limit = too_wide ? max_per_rank_ : capacity;
      plan::Plan out = oom_plan(cost_, system_, strategy_, lengths, {{0, 0, share, limit}});
      out.info["oversized_document"] = {
          {"index", d},
          {"length", lengths[d]},
          {"cp_size", p},
          {"widest_group", widest},
          {"max_seqlen_per_rank", max_per_rank_},
          {"capacity_tokens", too_wide ? max_per_rank_ * widest : capacity * p}};
      return out;
    }
    if (!packing_aware_) return build(lengths, schedule_dynamic_cp(lengths, max_per_rank_, world));
    const std::vector<DynamicCpMicroBatch> schedule =
        schedule_dynamic_cp_packed(lengths, max_per_rank_, world);
    // The token test holds each group to max_seqlen_per_rank padded rows per GPU; set above the GPU's
    // capacity, a full pack can still not fit: an OOM naming the pack's first document.
    for (const DynamicCpMicroBatch& mb : schedule) {
      for (const DynamicCpPackedGroup& g : mb.groups) {
        const std::int64_t rows = g.tokens_per_rank;  // the zigzag-padded rows each GPU holds
        if (rows <= capacity) continue;
        plan::Plan out = oom_plan(cost_, system_, strategy_, lengths, {{g.first_rank, 0, rows, capacity}});
        out.info["oversized_pack"] = {{"first_document", g.docs.front()},
                                      {"documents", g.docs.size()},
                                      {"cp_size", g.size},
                                      {"tokens_per_rank", rows},
                                      {"max_seqlen_per_rank", max_per_rank_},
                                      {"capacity_tokens", capacity}};
        return out;
      }
    }
    return build_packed(lengths, schedule);
  }

 private:
  // Writes the micro-batches in order, groups in rank order inside one: each group's documents are one
  // pack (one THD micro-batch) on a zigzag ring over the group. Every GPU is in exactly one group per
  // micro-batch and meets them in the same order, so no two rings wait on each other.
  plan::Plan build_packed(const std::vector<std::int64_t>& lengths,
                          const std::vector<DynamicCpMicroBatch>& schedule) const {
    PlanBuilder b(cost_, system_, strategy_);
    b.set_passes(passes_);
    std::vector<int> last_op(static_cast<std::size_t>(b.world_size()), -1);
    int largest = 1, local_docs = 0;
    std::size_t packs = 0;
    nlohmann::json sizes = nlohmann::json::array();  // per micro-batch, its group sizes in rank order
    for (std::size_t m = 0; m < schedule.size(); ++m) {
      const int mb = static_cast<int>(m);
      nlohmann::json row = nlohmann::json::array();
      for (const DynamicCpPackedGroup& g : schedule[m].groups) {
        largest = std::max(largest, g.size);
        if (g.size == 1) local_docs += static_cast<int>(g.docs.size());
        std::vector<int> seqs;
        for (const int d : g.docs) seqs.push_back(b.add_sequence(lengths[static_cast<std::size_t>(d)], mb));
        std::vector<int> ranks(static_cast<std::size_t>(g.size));
        std::iota(ranks.begin(), ranks.end(), g.first_rank);
        add_ring_layer(b, ranks, std::move(seqs), mb, last_op);
        row.push_back(g.size);
        ++packs;
      }
      sizes.push_back(std::move(row));
    }
    b.set_micro_batches(std::max<int>(1, static_cast<int>(schedule.size())));
    b.add_info("schedule", "packing-aware");
    b.add_info("max_seqlen_per_rank", max_per_rank_);
    b.add_info("packs", packs);
    b.add_info("local_documents", local_docs);
    b.add_info("cp_documents", static_cast<int>(lengths.size()) - local_docs);
    b.add_info("largest_group", largest);
    b.add_info("micro_batch_group_sizes", std::move(sizes));
    return b.finish();
  }

  // Writes the rounds in order; inside a round, document slot by slot (each GPU's i-th document is
  // micro-batch base + i) and groups in rank order. Groups of one round are disjoint and every GPU sees
  // the rounds in the same order, so no two rings wait on each other.
  plan::Plan build(const std::vector<std::int64_t>& lengths,
                   const std::vector<DynamicCpRound>& rounds) const {
    PlanBuilder b(cost_, system_, strategy_);
    b.set_passes(passes_);
    std::vector<int> last_op(static_cast<std::size_t>(b.world_size()), -1);
    int base = 0, largest = 1, local_docs = 0;
    for (const DynamicCpRound& round : rounds) {
      std::size_t slots = 0;
      for (const DynamicCpGroup& g : round.groups) slots = std::max(slots, g.docs.size());
      for (std::size_t slot = 0; slot < slots; ++slot) {
        const int mb = base + static_cast<int>(slot);
        for (const DynamicCpGroup& g : round.groups) {
          if (slot >= g.docs.size()) continue;
          largest = std::max(largest, g.size);
          if (g.size == 1) ++local_docs;
          const int seq = b.add_sequence(lengths[static_cast<std::size_t>(g.docs[slot])], mb);
          std::vector<int> ranks(static_cast<std::size_t>(g.size));
          std::iota(ranks.begin(), ranks.end(), g.first_rank);
          add_ring_layer(b, ranks, {seq}, mb, last_op);
        }
      }
      base += static_cast<int>(slots);
    }
    b.set_micro_batches(std::max(1, base));
    b.add_info("schedule", "per-document");
    b.add_info("max_seqlen_per_rank", max_per_rank_);
    b.add_info("rounds", rounds.size());
    b.add_info("local_documents", local_docs);
    b.add_info("cp_documents", static_cast<int>(lengths.size()) - local_docs);
    b.add_info("largest_group", largest);
    nlohmann::json sizes = nlohmann::json::array();  // per round, its group sizes in rank order
    for (const DynamicCpRound& round : rounds) {
      nlohmann::json r = nlohmann::json::array();
      for (const DynamicCpGroup& g : round.groups) r.push_back(g.size);
      sizes.push_back(std::move(r));
    }
    b.add_info("round_group_sizes", std::move(sizes));
    return b.finish();
  }

  std::string system_;
  std::string strategy_;
  Passes passes_;
  bool packing_aware_ = true;
  const CostModel& cost_;
  std::int64_t max_per_rank_ = 0;
};

std::unique_ptr<Strategy> make_dynamic_cp(const SystemSpec& system, const Scenario& scenario,
                                          const CostModel& cost) {
  return std::make_unique<DynamicCp>(system, scenario, cost);
}

const StrategyRegistration registration{
    SystemInfo{
        .name = "dynamic-cp",
        .description = "Megatron-LM dynamic CP: per-document CP size of at least the next power of two of "
                       "s / max_seqlen_per_rank; every micro-batch packs documents on aligned rings "
                       "spanning all GPUs",
        .order = 50,
        .baseline = true,
        .options = {SystemOption{
                        .name = "max_seqlen_per_rank",
                        .type = OptionType::positive_int_or_auto,
                        .default_value = "auto",
                        .choices = {},
                        .description = "tokens of a document per GPU that set its CP size (Megatron's "
                                       "max_seqlen_per_dp_cp_rank); auto = the GPU's token capacity",
                    },
                    SystemOption{
                        .name = "schedule",
                        .type = OptionType::choice,
                        .default_value = "packing-aware",
                        .choices = {"packing-aware", "per-document"},
                        .description =
                            "packing-aware: current Megatron-LM (DefaultDynamicCPScheduler, THD packs per "
                            "group on the standard schedule); per-document: Megatron-Core's earlier "
                            "BalancedCPScheduler, one micro-batch per document in rounds",
                    }},
        .validate = {},
        .label = {},
    },
    make_dynamic_cp};

}  // namespace
}  // namespace zb
