// llama3-cp: Llama 3's all-gather context parallelism (Llama 3 paper §3.3.2; TransformerEngine's
// AttnFuncWithCPAndKVAllGather). CP groups of C consecutive ranks (N/C data-parallel groups, documents
// dealt to them as uniform-cp does); every document of a pack is zigzag-sharded over its group (2C
// chunks, rank i holds chunks i and 2C−1−i); per layer each rank all-gathers the group's K and V (one
// collective, exposed: attention waits for it) and computes its own query chunks against every earlier
// key of their document in one varlen call. Backward re-gathers K/V and reduce-scatters dK/dV (the
// lowering's adjoint). Memory counts the gathered K/V of the whole pack. See docs/STRATEGIES.md.
#include <algorithm>
#include <cmath>
#include <string>

#include "core/strategies/packed_cp.hpp"
#include "core/strategies/plan_builder.hpp"
#include "core/strategies/registration.hpp"

namespace zb {
namespace {

// Per-GPU memory of a pack of `padded` tokens at degree c, in token-equivalents of M: its share of the
// activations (padded / c tokens) plus one layer's K/V of the other ranks' tokens while they are gathered.
double pack_need(const CostModel& cost, std::int64_t padded, int c) {
  const double kv_per_token = cost.kv_bytes(1.0) / cost.activation_bytes_per_token();
  const double share = static_cast<double>(padded) / c;
  return share + (static_cast<double>(padded) - share) * kv_per_token;
}

// The largest pack (padded tokens) whose need fits M: S/c + (S − S/c)·ρ ≤ M.
std::int64_t pack_capacity(const CostModel& cost, int c) {
  const double kv_per_token = cost.kv_bytes(1.0) / cost.activation_bytes_per_token();
  const auto m = static_cast<double>(cost.token_capacity_per_gpu());
  auto capacity = static_cast<std::int64_t>(std::floor(m * c / (1.0 + (c - 1) * kv_per_token)));
  while (capacity > 0 && pack_need(cost, capacity, c) > m) --capacity;  // floating-point edge
  return capacity;
}

bool fits(const CostModel& cost, const std::vector<std::int64_t>& lengths, int c) {
  const std::int64_t longest = lengths.empty() ? 0 : *std::max_element(lengths.begin(), lengths.end());
  return pad_to(longest, 2LL * c) <= pack_capacity(cost, c);
}

// The smallest degree (power of two first, as smallest_holding_degree) whose pack capacity holds the
// longest of `lengths`.
int holding_degree(const CostModel& cost, const std::vector<std::int64_t>& lengths) {
  return smallest_holding_degree(cost.cluster().world_size(), [&](int c) { return fits(cost, lengths, c); });
}

// The rank's attention: for each document, each of its query chunks against every key of the document
// up to the chunk's end (causal), one varlen call over all of them.
plan::Op attention_op(const plan::Plan& plan, const plan::Group& group, int pos, int deps) {
  plan::Op op;
  op.kind = plan::OpKind::attention;
  op.name = "attn";
  op.group = group.id;
  op.micro_batch = group.micro_batch;
  op.deps = {deps};
  const int c = static_cast<int>(group.ranks.size());
  EquivalentQTokens q;
  for (const int seq : group.sequences) {
    const std::int64_t length = plan.sequences[static_cast<std::size_t>(seq)].length;
    for (const plan::Shard& chunk : plan::owned_shards(seq, length, c, pos)) {
      op.blocks.push_back({seq, chunk.begin, chunk.end, 0, chunk.end, plan::Mask::causal, {}});
      const auto pairs =
          static_cast<double>(CostModel::attention_pairs(chunk.begin, chunk.end, 0, chunk.end, true));
      op.pairs += pairs;
      q.add(pairs, static_cast<double>(chunk.size()));
    }
  }
  op.q_tokens = q.value();
  return op;
}

plan::Plan plan_llama3_cp(const PackedCpSetup& setup, const CostModel& cost,
                          const std::vector<std::int64_t>& lengths) {
  const int world = cost.cluster().world_size();
  const int c = setup.degree;
  const int groups = world / c;
  const std::int64_t align = 2LL * c;
  const std::int64_t capacity = pack_capacity(cost, c);

  // A document whose pack alone does not fit (its share plus the gathered K/V) is an OOM, never split.
  for (std::size_t d = 0; d < lengths.size(); ++d) {
    const std::int64_t padded = pad_to(lengths[d], align);
    if (padded <= capacity) continue;
    plan::Plan p = oom_plan(cost, setup.system, setup.strategy, lengths,
                            {{0, 0, static_cast<std::int64_t>(std::ceil(pack_need(cost, padded, c))),
                              cost.token_capacity_per_gpu()}});
    p.info["degree"] = c;
    p.info["oversized_document"] = {{"index", d}, {"length", lengths[d]}, {"pack_capacity_tokens", capacity}};
    return p;
  }
  const std::vector<std::vector<Pack>> dealt =
      deal_packs(cost, lengths, groups, align, capacity, setup.dealing);
  PlanBuilder b(cost, setup.system, setup.strategy);
  b.set_passes(setup.passes);
  const int nodes_spanned = (c + cost.cluster().gpus_per_node - 1) / cost.cluster().gpus_per_node;
  const plan::Level level = c == 1              ? plan::Level::local
                            : nodes_spanned > 1 ? plan::Level::inter_node
                                                : plan::Level::intra_node;
  const int micro_batches = micro_batches_and_packs(dealt).first;
  std::vector<int> last_op(static_cast<std::size_t>(world), -1);
  for (int mb = 0; mb < micro_batches; ++mb) {
    for (int g = 0; g < groups; ++g) {
      const auto& group_packs = dealt[static_cast<std::size_t>(g)];
      if (static_cast<std::size_t>(mb) >= group_packs.size()) continue;
      std::vector<int> seqs;
      for (const int doc : group_packs[static_cast<std::size_t>(mb)].docs)
        seqs.push_back(b.add_sequence(lengths[static_cast<std::size_t>(doc)], mb));
      std::vector<int> ranks(static_cast<std::size_t>(c));
      for (int i = 0; i < c; ++i) ranks[static_cast<std::size_t>(i)] = g * c + i;
      const int gid = b.add_group(level, ranks, seqs, mb);
      const int tag = b.new_tag();
      for (int i = 0; i < c; ++i) {
        const int r = ranks[static_cast<std::size_t>(i)];
        const plan::Group& group = b.plan().groups[static_cast<std::size_t>(gid)];
        const std::int64_t tokens = b.zigzag_rank_tokens(group, i);
        const int prev = last_op[static_cast<std::size_t>(r)];
        const int qkv =
            b.add_qkv_gemm(r, tokens, prev >= 0 ? std::vector<int>{prev} : std::vector<int>{}, mb);
        int kv_ready = qkv;
        if (c > 1) {  // the exposed all-gather: attention waits for the whole group's K/V
          plan::Op gather;
          gather.kind = plan::OpKind::collective;
          gather.collective = plan::CollectiveKind::all_gather;
          gather.name = "kv all-gather";
          gather.group = gid;
          gather.micro_batch = mb;
          gather.collective_ranks = ranks;
          gather.tag = tag;
          gather.bytes = static_cast<std::int64_t>(cost.kv_bytes(static_cast<double>(tokens)));
          gather.deps = {qkv};
          kv_ready = b.add_op(r, std::move(gather));
        }
        plan::Op attn = attention_op(b.plan(), group, i, kv_ready);
        std::vector<int> after{qkv};
        if (!attn.blocks.empty()) after.push_back(b.add_op(r, std::move(attn)));
        last_op[static_cast<std::size_t>(r)] = b.add_output_gemms(r, tokens, after, mb);
      }
    }
  }
  add_packed_cp_facts(b, setup, dealt, capacity);
  return b.finish();
}

class Llama3Cp final : public Strategy {
 public:
  // `degree` is complete and checked (registration below): "auto", "per-batch" or a divisor of the world
  // size. "auto" is fixed here, once for the run, from the context length: a launch script's CP size.
  Llama3Cp(const SystemSpec& system, const Scenario& scenario, const CostModel& cost)
      : setup_{system.label, system.name, 0, scenario.passes},
        choice_(read_degree_choice(system.options.at("degree"))),
        cost_(cost) {
    read_packed_cp_options(system, setup_);
    if (choice_ == DegreeChoice::launch)
      setup_.degree = holding_degree(cost_, {scenario.workload.max_seq_len});
  }

  plan::Plan make_plan(const Batch& batch) const override {
    PackedCpSetup setup = setup_;
    if (choice_ == DegreeChoice::per_batch) setup.degree = holding_degree(cost_, batch.lengths);
    plan::Plan p = plan_llama3_cp(setup, cost_, batch.lengths);
    p.info["degree_choice"] = degree_choice_name(choice_);
    return p;
  }

 private:
  PackedCpSetup setup_;
  DegreeChoice choice_;
  const CostModel& cost_;
};

std::unique_ptr<Strategy> make_llama3_cp(const SystemSpec& system, const Scenario& scenario,
                                         const CostModel& cost) {
  return std::make_unique<Llama3Cp>(system, scenario, cost);
}

const StrategyRegistration registration{
    SystemInfo{
        .name = "llama3-cp",
        .description =
            "Llama 3 context parallelism: per-document zigzag over C ranks, K/V all-gathered per layer "
            "(exposed), dK/dV reduce-scattered",
        .order = 15,
        .baseline = true,
        .options = {degree_system_option(
                        "CP degree C, dividing the world size (N/C data-parallel groups); auto = fixed "
                        "for the run: the smallest power of two whose group holds a max_seq_len document; "
                        "per-batch = that rule on each batch's longest document (idealised)",
                        {"per-batch"}),
                    dealing_system_option()},
        .validate = check_cp_degree,
        .label = {},
    },
    make_llama3_cp};

}  // namespace
}  // namespace zb
