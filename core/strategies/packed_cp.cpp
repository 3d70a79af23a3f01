#include "core/strategies/packed_cp.hpp"

#include <algorithm>
#include <functional>
#include <numeric>
#include <queue>

#include "core/cost/iteration_cost.hpp"
#include "core/strategies/packing.hpp"
#include "core/strategies/plan_builder.hpp"

namespace zb {
namespace {

// FFD packs of the whole batch, pack i to group i mod D as its micro-batch i / D.
std::vector<std::vector<Pack>> deal_round_robin(const std::vector<std::int64_t>& lengths, int groups,
                                                std::int64_t align, std::int64_t capacity) {
  std::vector<std::vector<Pack>> dealt(static_cast<std::size_t>(groups));
  std::vector<Pack> packs = pack_ffd(lengths, align, capacity);
  for (std::size_t i = 0; i < packs.size(); ++i)
    dealt[i % static_cast<std::size_t>(groups)].push_back(std::move(packs[i]));
  return dealt;
}

// One rank's GEMMs over `tokens` rows per layer: forward and, with a backward pass, backward. The linear
// term of every floor below.
double linear_floor(const CostModel& cost, double tokens, Passes passes) {
  return cost.linear_fwd_time(tokens) + (passes == Passes::fwd_bwd ? cost.linear_bwd_time(tokens) : 0.0);
}

// Estimated forward seconds of one document on one GPU (attention at its own length, and its GEMMs): the
// work LPT balances. Dividing by the group size would not change the order, so it is left out.
double document_cost(const CostModel& cost, std::int64_t length) {
  const auto s = static_cast<double>(length);
  return cost.attention_time(cost.attention_fwd_flops(s * (s + 1) / 2), s) + cost.linear_fwd_time(s);
}

// Longest processing time first: costliest document to the least-loaded group (lowest index on ties).
// With at least D documents every group gets one. Returns each group's documents (batch indices).
std::vector<std::vector<int>> lpt_groups(const CostModel& cost, const std::vector<std::int64_t>& lengths,
                                         int groups) {
  std::vector<int> order(lengths.size());
  std::iota(order.begin(), order.end(), 0);
  std::vector<double> doc_cost(lengths.size());
  for (std::size_t d = 0; d < lengths.size(); ++d) doc_cost[d] = document_cost(cost, lengths[d]);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return doc_cost[static_cast<std::size_t>(a)] > doc_cost[static_cast<std::size_t>(b)];
  });
  using Load = std::pair<double, int>;  // (work so far, group)
  std::priority_queue<Load, std::vector<Load>, std::greater<>> least;
  for (int g = 0; g < groups; ++g) least.emplace(0.0, g);
  std::vector<std::vector<int>> group_docs(static_cast<std::size_t>(groups));
  for (const int d : order) {
    auto [work, g] = least.top();
    least.pop();
    group_docs[static_cast<std::size_t>(g)].push_back(d);
    least.emplace(work + doc_cost[static_cast<std::size_t>(d)], g);
  }
  return group_docs;
}

// LPT over the groups, then FFD packs per group.
std::vector<std::vector<Pack>> deal_balanced(const CostModel& cost, const std::vector<std::int64_t>& lengths,
                                             int groups, std::int64_t align, std::int64_t capacity) {
  const std::vector<std::vector<int>> group_docs = lpt_groups(cost, lengths, groups);
  std::vector<std::vector<Pack>> dealt(static_cast<std::size_t>(groups));
  for (std::size_t g = 0; g < dealt.size(); ++g) {
    std::vector<std::int64_t> group_lengths;
    for (const int d : group_docs[g]) group_lengths.push_back(lengths[static_cast<std::size_t>(d)]);
    dealt[g] = pack_ffd(group_lengths, align, capacity);
    for (Pack& p : dealt[g]) {
      for (int& doc : p.docs) doc = group_docs[g][static_cast<std::size_t>(doc)];  // back to batch indices
    }
  }
  return dealt;
}

}  // namespace

SystemOption degree_system_option(std::string description, std::vector<std::string> keywords) {
  return SystemOption{
      .name = "degree",
      .type = OptionType::positive_int_or_auto,
      .default_value = "auto",
      .choices = std::move(keywords),
      .description = std::move(description),
  };
}

DegreeChoice read_degree_choice(const nlohmann::json& value) {
  if (value.is_number_integer()) return DegreeChoice::fixed;
  return value == "per-batch" ? DegreeChoice::per_batch : DegreeChoice::launch;
}

const char* degree_choice_name(DegreeChoice choice) {
  switch (choice) {
    case DegreeChoice::fixed:
      return "fixed";
    case DegreeChoice::launch:
      return "auto";
    case DegreeChoice::per_batch:
      return "per-batch";
  }
  return "?";
}

int smallest_holding_degree(int world, const std::function<bool(int)>& holds) {
  for (int c = 1; c <= world; c *= 2) {
    if (world % c == 0 && holds(c)) return c;
  }
  for (int c = 1; c <= world; ++c) {
    if (world % c == 0 && holds(c)) return c;
  }
  return world;
}

SystemOption dealing_system_option() {
  return SystemOption{
      .name = "dealing",
      .type = OptionType::choice,
      .default_value = "balanced",
      .choices = {"balanced", "round-robin"},
      .description =
          "balanced: documents to data-parallel groups by estimated cost (LPT), packed per group; "
          "round-robin: FFD packs dealt in turn (a cost-oblivious sampler)",
  };
}

void read_packed_cp_options(const SystemSpec& system, PackedCpSetup& setup) {
  const nlohmann::json& degree = system.options.at("degree");
  if (degree.is_number_integer()) setup.degree = degree.get<int>();
  setup.dealing = system.options.at("dealing").get<std::string>() == "round-robin" ? Dealing::round_robin
                                                                                   : Dealing::balanced;
}

std::vector<OptionProblem> check_cp_degree(const nlohmann::json& options, const SystemCheckContext& context) {
  const nlohmann::json& degree = options.at("degree");
  if (!context.world_size || !degree.is_number_integer()) return {};
  const auto c = degree.get<std::int64_t>();
  if (*context.world_size % c == 0) return {};
  return {{"degree",
           "degree " + std::to_string(c) + " does not divide the world size " +
               std::to_string(*context.world_size) + " (nodes x gpus_per_node)",
           "choose a divisor of the world size, or \"auto\""}};
}

double zigzag_attention_floor(const CostModel& cost, std::int64_t length, int ring, Passes passes) {
  const auto s = static_cast<double>(length);
  const double c = ring;
  const double overhead = cost.profile().attention_call_overhead;
  const double pairs = s * (s + 1) / 2 / c;                     // a rank's zigzag share
  const double q = std::max(1.0, ring == 1 ? s : s / (2 * c));  // its query chunks' length
  const double backward =
      passes == Passes::fwd_bwd ? cost.attention_time(cost.attention_bwd_flops(pairs), q) - overhead : 0.0;
  return cost.attention_time(cost.attention_fwd_flops(pairs), q) - overhead + backward;
}

double packed_cp_compute_floor(const CostModel& cost, const std::vector<std::int64_t>& lengths, int degree,
                               Passes passes) {
  const int groups = cost.cluster().world_size() / degree;
  const double c = degree;
  double worst = 0;
  for (const std::vector<int>& docs : lpt_groups(cost, lengths, groups)) {
    double attention = 0, tokens = 0;
    for (const int d : docs) {
      attention += zigzag_attention_floor(cost, lengths[static_cast<std::size_t>(d)], degree, passes);
      tokens += static_cast<double>(lengths[static_cast<std::size_t>(d)]) / c;
    }
    worst = std::max(worst, attention + linear_floor(cost, tokens, passes));
  }
  return worst * cost.model().layers;
}

double packed_cp_document_floor(const CostModel& cost, const std::vector<std::int64_t>& lengths, int degree,
                                Passes passes) {
  if (lengths.empty()) return 0.0;
  // The group holding a document does at least its share of it (the same terms as the floor's sum). Each
  // term grows with the length (more pairs and rows, and longer rows run no slower), so the costliest
  // document is the longest: one evaluation instead of one per document.
  const std::int64_t length = *std::max_element(lengths.begin(), lengths.end());
  return std::max(0.0, document_share_floor(cost, length, degree, passes)) * cost.model().layers;
}

double packed_cp_average_floor(const CostModel& cost, const std::vector<std::int64_t>& lengths, int degree,
                               Passes passes) {
  if (lengths.empty()) return 0.0;
  const int groups = cost.cluster().world_size() / degree;
  double attention = 0, tokens = 0;
  for (const std::int64_t length : lengths) {
    attention += zigzag_attention_floor(cost, length, degree, passes);
    tokens += static_cast<double>(length) / degree;
  }
  // LPT gives every group a document while documents last (lpt_groups), so this many groups hold tokens.
  const double holding = std::min<double>(groups, static_cast<double>(lengths.size()));
  return (attention + holding * linear_floor(cost, tokens / holding, passes)) / groups * cost.model().layers;
}

double document_share_floor(const CostModel& cost, std::int64_t length, int ring, Passes passes) {
  return zigzag_attention_floor(cost, length, ring, passes) +
         linear_floor(cost, static_cast<double>(length) / ring, passes);
}

bool packed_cp_fits(const CostModel& cost, const std::vector<std::int64_t>& lengths, int degree) {
  const std::int64_t capacity = cost.token_capacity_per_gpu() * degree;
  return std::all_of(lengths.begin(), lengths.end(),
                     [&](std::int64_t s) { return pad_to(s, 2LL * degree) <= capacity; });
}

double packed_cp_prediction_floor(const CostModel& cost, const std::vector<std::int64_t>& lengths, int degree,
                                  Passes passes, Dealing dealing) {
  const int world = cost.cluster().world_size();
  const int c = degree;
  const int gpn = cost.cluster().gpus_per_node;
  const std::int64_t capacity = cost.token_capacity_per_gpu() * c;
  const std::int64_t align = 2LL * c;
  if (!packed_cp_fits(cost, lengths, c)) return 0.0;  // plan_packed_cp's OOM
  // The NIC at no more than its line rate: the estimate's rate is at most this (PCIe, oversubscription).
  const LinkSpec line_rate{.bandwidth = cost.cluster().nic.bandwidth, .latency = 0.0};
  std::vector<double> tokens(static_cast<std::size_t>(world), 0.0);
  std::vector<std::int64_t> held(static_cast<std::size_t>(c));
  double slowest_hop = 0;
  const std::vector<std::vector<Pack>> dealt = deal_packs(cost, lengths, world / c, align, capacity, dealing);
  for (std::size_t g = 0; g < dealt.size(); ++g) {
    const int first = static_cast<int>(g) * c;
    for (const Pack& pack : dealt[g]) {
      // Position i holds chunks i and 2C−1−i of each document (one rank holds it whole), as add_group lays it
      // out.
      std::fill(held.begin(), held.end(), 0);
      for (const int d : pack.docs) {
        const std::int64_t s = lengths[static_cast<std::size_t>(d)];
        for (int i = 0; i < c; ++i) {
          held[static_cast<std::size_t>(i)] += c == 1 ? s
                                                      : plan::zigzag_chunk(d, s, c, i).size() +
                                                            plan::zigzag_chunk(d, s, c, 2 * c - 1 - i).size();
        }
      }
      for (int i = 0; i < c; ++i)
        tokens[static_cast<std::size_t>(first + i)] += static_cast<double>(held[static_cast<std::size_t>(i)]);
      // At step t = 1 … C−1 position i forwards the K/V of position i−t+1 to i+1
      // (PlanBuilder::add_attention), each send after the previous one: a hop between nodes carries every
      // position's K/V but i+1's.
      for (int i = 0; i < c && c > 1; ++i) {
        if ((first + i) / gpn == (first + (i + 1) % c) / gpn) continue;
        double hop = 0;
        for (int t = 1; t < c; ++t) {
          const std::int64_t owner = held[static_cast<std::size_t>(((i - t + 1) % c + c) % c)];
          hop += cost.transfer_time(
              static_cast<double>(static_cast<std::int64_t>(cost.kv_bytes(static_cast<double>(owner)))),
              line_rate, LinkClass::nic);
        }
        slowest_hop = std::max(slowest_hop, hop);
      }
    }
  }
  const double layers =
      std::max(dealing == Dealing::balanced ? packed_cp_compute_floor(cost, lengths, c, passes) : 0.0,
               slowest_hop * cost.model().layers);
  // The plan is a grid plan (tensor parallelism expands it afterwards), as its prediction assumes.
  const WholeIterationSetup setup = whole_iteration_setup(cost, 1);
  const double backward = passes == Passes::fwd_bwd ? 1.0 : 0.0;  // only whether there is a backward pass
  const WholeIterationParts parts = whole_iteration_parts(cost, setup, tokens, {0.0, backward}, {});
  return layers + parts.embedding_and_head_critical + parts.optimizer;
}

std::vector<std::vector<Pack>> deal_packs(const CostModel& cost, const std::vector<std::int64_t>& lengths,
                                          int groups, std::int64_t align, std::int64_t capacity,
                                          Dealing dealing) {
  return dealing == Dealing::balanced ? deal_balanced(cost, lengths, groups, align, capacity)
                                      : deal_round_robin(lengths, groups, align, capacity);
}

std::pair<int, std::size_t> micro_batches_and_packs(const std::vector<std::vector<Pack>>& dealt) {
  std::size_t micro_batches = 0, packs = 0;
  for (const auto& group_packs : dealt) {
    micro_batches = std::max(micro_batches, group_packs.size());
    packs += group_packs.size();
  }
  return {static_cast<int>(micro_batches), packs};
}

void add_packed_cp_facts(PlanBuilder& b, const PackedCpSetup& setup,
                         const std::vector<std::vector<Pack>>& dealt, std::int64_t capacity) {
  const auto [micro_batches, packs] = micro_batches_and_packs(dealt);
  b.set_micro_batches(std::max(1, micro_batches));
  b.add_info("degree", setup.degree);
  b.add_info("groups", dealt.size());
  b.add_info("dealing", setup.dealing == Dealing::balanced ? "balanced" : "round-robin");
  b.add_info("packs", packs);
  b.add_info("pack_capacity_tokens", capacity);
}

plan::Plan plan_packed_cp(const PackedCpSetup& setup, const CostModel& cost,
                          const std::vector<std::int64_t>& lengths) {
  const int world = cost.cluster().world_size();
  const int c = setup.degree;
  const int groups = world / c;
  const std::int64_t per_gpu = cost.token_capacity_per_gpu();
  const std::int64_t capacity = per_gpu * c;
  const std::int64_t align = 2LL * c;

  // A document that does not fit one group's memory is an OOM: report it, never split it silently.
  std::vector<plan::OomReport> oom;
  for (std::size_t d = 0; d < lengths.size(); ++d) {
    const std::int64_t need = pad_to(lengths[d], align);
    if (need > capacity && oom.empty()) oom.push_back({0, 0, need / c, per_gpu});
  }
  if (!oom.empty()) return oom_plan(cost, setup.system, setup.strategy, lengths, std::move(oom));

  const std::vector<std::vector<Pack>> dealt =
      deal_packs(cost, lengths, groups, align, capacity, setup.dealing);
  PlanBuilder b(cost, setup.system, setup.strategy);
  b.set_passes(setup.passes);
  const int nodes_spanned = (c + cost.cluster().gpus_per_node - 1) / cost.cluster().gpus_per_node;
  const plan::Level level = c == 1              ? plan::Level::local
                            : nodes_spanned > 1 ? plan::Level::inter_node
                                                : plan::Level::intra_node;

  std::vector<int> last_op(static_cast<std::size_t>(world), -1);
  const int micro_batches = micro_batches_and_packs(dealt).first;
  for (int mb = 0; mb < micro_batches; ++mb) {
    for (int g = 0; g < groups; ++g) {
      const auto& group_packs = dealt[static_cast<std::size_t>(g)];
      if (static_cast<std::size_t>(mb) >= group_packs.size()) continue;
      const Pack& pack = group_packs[static_cast<std::size_t>(mb)];
      std::vector<int> seqs;
      for (int doc : pack.docs) seqs.push_back(b.add_sequence(lengths[static_cast<std::size_t>(doc)], mb));
      std::vector<int> ranks(static_cast<std::size_t>(c));
      for (int i = 0; i < c; ++i) ranks[static_cast<std::size_t>(i)] = g * c + i;
      const int gid = b.add_group(level, ranks, seqs, mb);
      const plan::Group& group = b.plan().groups.back();
      std::vector<int> ready(static_cast<std::size_t>(c));
      for (int i = 0; i < c; ++i) {
        const int r = ranks[static_cast<std::size_t>(i)];
        const auto tokens = b.zigzag_rank_tokens(group, i);
        const int prev = last_op[static_cast<std::size_t>(r)];
        ready[static_cast<std::size_t>(i)] =
            b.add_qkv_gemm(r, tokens, prev >= 0 ? std::vector<int>{prev} : std::vector<int>{}, mb);
      }
      const auto attn = b.add_attention(gid, ready);
      for (int i = 0; i < c; ++i) {
        const int r = ranks[static_cast<std::size_t>(i)];
        std::vector<int> deps = attn[static_cast<std::size_t>(i)];
        deps.push_back(ready[static_cast<std::size_t>(i)]);
        const auto tokens = b.zigzag_rank_tokens(b.plan().groups[static_cast<std::size_t>(gid)], i);
        last_op[static_cast<std::size_t>(r)] = b.add_output_gemms(r, tokens, deps, mb);
      }
    }
  }
  add_packed_cp_facts(b, setup, dealt, capacity);
  return b.finish();
}

}  // namespace zb
