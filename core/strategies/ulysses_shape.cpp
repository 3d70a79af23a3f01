// The shape of a Ulysses / USP plan (which u and r) and a lower bound on its time, shared by the ulysses
// strategy and by Zeppelin's planner, which plans USP's layout as one of its baseline shapes.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <string>

#include "core/strategies/packing.hpp"
#include "core/strategies/ulysses.hpp"

namespace zb {

std::string ulysses_degree_problem(const UlyssesModelFacts& facts, int u) {
  const int t = std::max(1, facts.tensor);
  const int heads = facts.heads / t;  // each TP rank splits its own heads further
  const int kv = std::max(1, facts.kv_heads / t);
  // The counts as a user finds them in the model section: "the model's 12 query heads (K/V heads: 4)", or
  // under TP "the 6 query heads per tensor-parallel rank (the model's 12 / TP 2; K/V heads: 4 / TP 2)".
  const auto counts = [&](const char* what, int per_rank, int model_count, const char* other,
                          int other_count) {
    if (t > 1)
      return fmt::format("the {} {} per tensor-parallel rank (the model's {} / TP {}; {}: {} / TP {})",
                         per_rank, what, model_count, t, other, other_count, t);
    return fmt::format("the model's {} {} ({}: {})", per_rank, what, other, other_count);
  };
  const int g = facts.gpus_per_node;
  if (heads % u != 0)
    return "does not divide " + counts("query heads", heads, facts.heads, "K/V heads", facts.kv_heads) +
           ": each member of a u-group computes heads/u whole heads (DeepSpeed-Ulysses requires the heads "
           "to be divisible by the degree)";
  if (u > g || g % u != 0)
    return fmt::format("does not divide the {} GPUs per node{} (a u-group stays inside one node)", g,
                       t > 1 ? fmt::format(" of the TP grid ({} / TP {})", g * t, t) : "");
  if (u <= kv && kv % u != 0)
    return "does not divide " + counts("K/V heads", kv, facts.kv_heads, "query heads", facts.heads) +
           ": a degree up to the K/V heads splits them, kv_heads/u to each member";
  if (u > kv && u % kv != 0)
    return "is no multiple of " + counts("K/V heads", kv, facts.kv_heads, "query heads", facts.heads) +
           ": a degree above the K/V heads replicates them (GQA), each member keeping the one K/V head its "
           "query heads read, so it must be a multiple of them";
  return "";
}

std::string ulysses_degree_problem(const CostModel& cost, int tensor, int u) {
  // The cost model is the TP grid's (core/strategies/tensor_parallel.hpp): its nodes hold the TP groups.
  return ulysses_degree_problem({.heads = cost.model().heads,
                                 .kv_heads = cost.model().kv_heads,
                                 .gpus_per_node = cost.cluster().gpus_per_node,
                                 .tensor = tensor},
                                u);
}

std::vector<OptionProblem> ulysses_degree_option_problems(const nlohmann::json& options,
                                                          const SystemCheckContext& context) {
  const nlohmann::json& degree = options.at("degree");
  if (!degree.is_number_integer() || !context.heads || !context.kv_heads || !context.gpus_per_node) return {};
  const int t = std::max(1, context.tensor);
  const UlyssesModelFacts facts{.heads = *context.heads,
                                .kv_heads = *context.kv_heads,
                                .gpus_per_node = *context.gpus_per_node / t,
                                .tensor = t};
  const std::int64_t u = degree.get<std::int64_t>();
  // A degree past an int divides no heads, which is what it is told.
  const std::string why = ulysses_degree_problem(
      facts, static_cast<int>(std::min<std::int64_t>(u, std::numeric_limits<int>::max())));
  if (why.empty()) return {};
  std::string usable;
  for (int v = 1; v <= facts.gpus_per_node; ++v)
    if (ulysses_degree_problem(facts, v).empty()) usable += (usable.empty() ? "" : ", ") + std::to_string(v);
  return {{"degree", fmt::format("ulysses degree {} {}", u, why),
           fmt::format("the degrees this model and node allow: {}; or \"auto\"", usable)}};
}

std::vector<int> ulysses_degrees(const CostModel& cost, int tensor) {
  std::vector<int> degrees;
  for (int u = 1; u <= cost.cluster().gpus_per_node; u *= 2)
    if (ulysses_degree_problem(cost, tensor, u).empty()) degrees.push_back(u);
  return degrees;
}

UlyssesSetup ulysses_shape(UlyssesSetup setup, const CostModel& cost, const std::vector<int>& degrees,
                           const std::vector<std::int64_t>& lengths, int fixed_degree, int fixed_ring) {
  const std::int64_t longest = lengths.empty() ? 0 : *std::max_element(lengths.begin(), lengths.end());
  const int world = cost.cluster().world_size();
  auto fits = [&](int u, int r) {
    UlyssesSetup trial = setup;
    trial.degree = u;
    trial.ring = r;
    return pad_to(longest, ulysses_alignment(trial)) <= ulysses_pack_capacity(cost, trial);
  };
  // The degree at ring r: the fixed one, or the smallest candidate that holds the longest document (the
  // largest candidate, whose plan is the OOM, when none does).
  auto degree_at = [&](int r) {
    if (fixed_degree > 0) return fixed_degree;
    int widest = 1;
    for (const int u : degrees) {
      if (world % (u * r) != 0) continue;
      if (fits(u, r)) return u;
      widest = u;
    }
    return widest;
  };
  if (fixed_ring > 0) {
    setup.ring = fixed_ring;
    setup.degree = degree_at(setup.ring);
  } else {  // "auto": no ring while a u-group holds the longest document, else the narrowest ring that does
    setup.ring = 1;
    setup.degree = degree_at(1);
    for (int r = 2; !fits(setup.degree, setup.ring) && r * setup.degree <= world; ++r) {
      if (world % (r * setup.degree) != 0) continue;
      setup.ring = r;
    }
  }
  return setup;
}

double ulysses_compute_floor(const UlyssesSetup& setup, const CostModel& cost,
                             const std::vector<std::int64_t>& lengths) {
  // Three bounds, each below what the plan's busiest rank does per layer, so their maximum is too:
  //  - the average rank's share of all the batch's compute (some rank does at least the average);
  //  - the share of the costliest document each of its u·r ranks does (they split it evenly at best);
  //  - the average rank's all-to-all bytes (Q, K, V out and O back; their adjoints in the backward),
  //    the (u−1)/u of them that leave the rank, at the NVLink rate.
  // Attention is charged at the kernel's large-call rate with no call overhead, a lower bound on any
  // split of the document into heads and chunks.
  const bool backward = setup.passes == Passes::fwd_bwd;
  const double group = static_cast<double>(setup.degree) * setup.ring;
  const double world = cost.cluster().world_size();
  const double overhead = cost.profile().attention_call_overhead;
  auto attention = [&](double length) {
    const double pairs = length * (length + 1) / 2;
    const double large_call = 1e15;  // query rows: the efficiency shape at its limit
    double t = cost.attention_time(cost.attention_fwd_flops(pairs), large_call) - overhead;
    if (backward) t += cost.attention_time(cost.attention_bwd_flops(pairs), large_call) - overhead;
    return t;
  };
  auto linear = [&](double tokens) {
    return cost.linear_fwd_time(tokens) + (backward ? cost.linear_bwd_time(tokens) : 0.0);
  };
  double attention_sum = 0, tokens = 0;
  std::int64_t longest = 0;
  for (const std::int64_t length : lengths) {
    const double l = static_cast<double>(length);
    attention_sum += attention(l);
    tokens += l;
    longest = std::max(longest, length);
  }
  // Both terms grow with the length: the costliest document is the longest.
  const double l = static_cast<double>(longest);
  const double costliest = lengths.empty() ? 0.0 : attention(l) / group + linear(l / group);
  const double average = attention_sum / world + linear(tokens / world);
  const double leaving = (setup.degree - 1.0) / setup.degree;
  const double a2a_bytes =
      leaving * (cost.qkv_bytes(tokens / world) + cost.hidden_bytes(tokens / world)) * (backward ? 2.0 : 1.0);
  const LinkSpec& nvlink = cost.cluster().nvlink;
  const double a2a =
      setup.degree > 1 ? a2a_bytes / (nvlink.bandwidth * cost.profile().nvlink_efficiency()) : 0.0;
  return std::max({average, costliest, a2a}) * cost.model().layers;
}

}  // namespace zb
