#include "core/workload/moe_router.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>

#include "core/common/rng.hpp"
#include "core/workload/multinomial.hpp"

namespace zb {
namespace {

// Keeps the router's streams apart from the workload's, which use the same scenario seed.
constexpr std::uint64_t router_salt = 0x6D6F'652D'726F'7574ULL;  // "moe-rout"

// What a stream is for; part of its name, so two kinds of draw never share a stream.
enum class Draw : std::uint64_t { popularity = 1, favourites = 2, slice = 3, layer = 4 };

std::uint64_t mix(std::uint64_t h, std::uint64_t value) {
  return mix64((h ^ value) + 0x9E3779B97F4A7C15ULL);
}

Rng stream(std::uint64_t seed, Draw draw, std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t d) {
  std::uint64_t id = static_cast<std::uint64_t>(draw);
  for (const std::int64_t part : {a, b, c, d}) id = mix(id, static_cast<std::uint64_t>(part));
  return Rng(seed ^ router_salt, id);
}

void require(bool condition, const std::string& what) {
  if (!condition) throw std::invalid_argument("MoeRouter: " + what);
}

// p_l for every layer: Zipf weights over an expert order that drifts from layer to layer.
std::vector<std::vector<double>> build_popularity(const MoeSpec& moe, int layers, std::uint64_t seed) {
  const auto experts = static_cast<std::size_t>(moe.experts);
  std::vector<double> zipf(experts);
  for (std::size_t i = 0; i < experts; ++i) zipf[i] = std::pow(static_cast<double>(i + 1), -moe.routing.skew);
  const double total = std::accumulate(zipf.begin(), zipf.end(), 0.0);

  Rng rng = stream(seed, Draw::popularity, 0, 0, 0, 0);
  std::vector<std::size_t> order(experts);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::vector<std::vector<double>> popularity;
  for (int layer = 0; layer < layers; ++layer) {
    // Layer 0 takes a full Fisher–Yates shuffle; a later layer takes each of its steps with probability
    // layer_drift, so drift 1 is again a full, independent shuffle.
    const double step_probability = layer == 0 ? 1.0 : moe.routing.layer_drift;
    for (std::size_t i = 0; i + 1 < experts; ++i) {
      if (rng.uniform() < step_probability) std::swap(order[i], order[i + rng.below(experts - i)]);
    }
    std::vector<double> p(experts);
    for (std::size_t i = 0; i < experts; ++i) p[order[i]] = zipf[i] / total;
    popularity.push_back(std::move(p));
  }
  return popularity;
}

}  // namespace

TokenLayout layout_of_counts(std::span<const std::int64_t> tokens_per_rank) {
  TokenLayout layout(tokens_per_rank.size());
  for (std::size_t rank = 0; rank < tokens_per_rank.size(); ++rank)
    layout[rank].push_back({static_cast<std::int64_t>(rank), tokens_per_rank[rank]});
  return layout;
}

MoeRouter::MoeRouter(const MoeSpec& moe, int layers, std::uint64_t seed) : moe_(moe), seed_(seed) {
  require(moe.experts > 0, "the model is dense (experts == 0)");
  require(moe.top_k >= 1 && moe.top_k <= moe.experts, "top_k must be in [1, experts]");
  require(moe.routing.skew >= 0, "skew must be >= 0");
  require(moe.routing.document_correlation >= 0 && moe.routing.document_correlation <= 1,
          "document_correlation must be in [0, 1]");
  require(moe.routing.layer_drift >= 0 && moe.routing.layer_drift <= 1, "layer_drift must be in [0, 1]");
  require(!moe.capacity_factor || *moe.capacity_factor > 0, "capacity_factor must be > 0");
  require(layers >= 1, "layers must be >= 1");
  popularity_ = build_popularity(moe, layers, seed);
}

std::span<const double> MoeRouter::popularity(int layer) const {
  if (layer < 0 || layer >= static_cast<int>(popularity_.size()))
    throw std::out_of_range("MoeRouter: layer " + std::to_string(layer) + " is not in [0, " +
                            std::to_string(popularity_.size()) + ")");
  return popularity_[static_cast<std::size_t>(layer)];
}

int MoeRouter::sampled_layer(int iteration) const {
  Rng rng = stream(seed_, Draw::layer, iteration, 0, 0, 0);
  return static_cast<int>(rng.below(popularity_.size()));
}

std::vector<int> MoeRouter::favourite_experts(int iteration, int layer, std::int64_t document) const {
  std::vector<double> weights(popularity(layer).begin(), popularity(layer).end());
  Rng rng = stream(seed_, Draw::favourites, iteration, layer, document, 0);
  std::vector<int> favourites;
  double remaining = 1.0;
  for (int pick = 0; pick < moe_.top_k; ++pick) {
    // Sequential draws without replacement; the last expert still weighted takes any rounding left over.
    double u = rng.uniform() * remaining;
    std::size_t chosen = weights.size();
    for (std::size_t e = 0; e < weights.size(); ++e) {
      if (weights[e] <= 0) continue;
      chosen = e;
      if (u < weights[e]) break;
      u -= weights[e];
    }
    favourites.push_back(static_cast<int>(chosen));
    remaining -= weights[chosen];
    weights[chosen] = 0;
  }
  return favourites;
}

ExpertLoads MoeRouter::route(int iteration, int layer, const TokenLayout& layout) const {
  const std::span<const double> p = popularity(layer);
  const double c = moe_.routing.document_correlation;
  const int k = moe_.top_k;
  ExpertLoads loads(static_cast<int>(layout.size()), moe_.experts);
  // A document's tokens choose from q, which depends only on its set of favourites (with c = 0, on nothing):
  // documents of one set are one class, and a rank's slices of one class draw together, as one multinomial
  // over their tokens (a sum of independent multinomials over the same q is one). At most C(E, k) classes,
  // so a rank holding thin slices of thousands of documents (a ring over every GPU) draws a few times.
  std::unordered_map<std::int64_t, int> class_of_document;
  std::map<std::vector<int>, int> class_of_set;
  std::vector<std::vector<double>> q_of_class;
  const auto class_of = [&](std::int64_t document) {
    const auto [at, added] = class_of_document.try_emplace(document, 0);
    if (!added) return at->second;
    std::vector<int> favourites;
    if (c > 0) {
      favourites = favourite_experts(iteration, layer, document);
      std::sort(favourites.begin(), favourites.end());
    }
    const auto [set, new_set] = class_of_set.try_emplace(favourites, static_cast<int>(q_of_class.size()));
    if (new_set) {
      std::vector<double> q(p.size());
      for (std::size_t e = 0; e < p.size(); ++e) q[e] = (1 - c) * p[e];
      for (const int favourite : favourites) q[static_cast<std::size_t>(favourite)] += c / k;
      q_of_class.push_back(std::move(q));
    }
    return at->second = set->second;
  };
  std::vector<std::int64_t> counts(p.size());
  std::vector<std::pair<int, std::int64_t>> drawn;  // a rank's classes in order of first slice, with tokens
  std::vector<int> slot;                            // [class] → its entry in `drawn`, for the current rank
  std::vector<std::size_t> slot_rank;               // [class] → the rank that set slot
  for (std::size_t rank = 0; rank < layout.size(); ++rank) {
    std::int64_t rank_tokens = 0;
    std::int64_t* const row = loads.routed.data() + rank * p.size();
    drawn.clear();
    for (const DocumentSlice& slice : layout[rank]) {
      if (slice.tokens < 0) throw std::invalid_argument("MoeRouter: a slice has a negative token count");
      if (slice.tokens == 0) continue;
      rank_tokens += slice.tokens;
      const auto cls = static_cast<std::size_t>(class_of(slice.document));
      if (cls >= slot.size()) {
        slot.resize(cls + 1, -1);
        slot_rank.resize(cls + 1, layout.size());
      }
      if (slot_rank[cls] != rank) {
        slot_rank[cls] = rank;
        slot[cls] = static_cast<int>(drawn.size());
        drawn.emplace_back(static_cast<int>(cls), 0);
      }
      drawn[static_cast<std::size_t>(slot[cls])].second += slice.tokens;
    }
    for (std::size_t d = 0; d < drawn.size(); ++d) {
      const auto [cls, tokens] = drawn[d];
      Rng rng = stream(seed_, Draw::slice, iteration, layer, static_cast<std::int64_t>(rank),
                       static_cast<std::int64_t>(d));
      capped_multinomial_into(rng, tokens * k, q_of_class[static_cast<std::size_t>(cls)], tokens, counts);
      for (std::size_t e = 0; e < p.size(); ++e) row[e] += counts[e];
    }
    if (!moe_.capacity_factor) continue;
    // Per-rank capacity, as Megatron-Core computes it from the tokens each rank routes.
    const auto capacity = static_cast<std::int64_t>(
        std::ceil(*moe_.capacity_factor * k * static_cast<double>(rank_tokens) / moe_.experts));
    loads.capacity.push_back(capacity);
    std::int64_t* const dropped = loads.dropped.data() + rank * p.size();
    for (std::size_t e = 0; e < p.size(); ++e) {
      dropped[e] = std::max<std::int64_t>(row[e] - capacity, 0);
      row[e] -= dropped[e];
    }
  }
  return loads;
}

}  // namespace zb
