#pragma once
// The MoE router's load model (issue 34, item 3; docs/MOE.md, "The router load model"). A real router's
// choices are known only once the batch runs, so a planner must never see them; what it shapes (dispatch
// volumes, expert GEMM sizes, the all-to-all's imbalance) is drawn here, per iteration and layer, from a
// seeded model of how unevenly experts are chosen:
//
//   popularity   layer l's experts are popular by Zipf's law, p_l(π_l(i)) ∝ (i + 1)^(−skew) for the i-th
//                most popular; skew 0 makes every expert alike. π_0 is a seeded permutation; each later
//                layer walks the previous one's order with one Fisher–Yates step per slot, taken with
//                probability layer_drift (0: every layer alike; 1: an independent order per layer).
//   documents    each document has top_k favourite experts per layer, drawn from p_l without replacement;
//                its tokens choose from q = (1 − c)·p_l + c·(uniform over the favourites), c the
//                document_correlation. c = 1 sends every token of a document to exactly its favourites.
//   a rank       makes T·top_k choices for its T tokens of documents of one favourite set (one q): one
//                multinomial over q, no expert taking more than T (a token's experts are distinct;
//                multinomial.hpp). A sum of independent multinomials over one q is one, so a rank's slices
//                of one set draw together: at most C(E, top_k) draws per rank, however many documents.
//   capacity     with a capacity factor f, an expert takes at most ⌈f·top_k·T_r/E⌉ choices from rank r (T_r
//                the rank's tokens; Megatron-Core's and GShard's per-rank capacity); the rest are dropped.
//                Dropless keeps every choice.
//
// Deterministic: the same (spec, layers, seed) and the same (iteration, layer, layout) give the same
// loads, byte for byte, on every platform. Every draw has its own stream, named by what it is for, so a
// layer or iteration is routed without routing the others.
#include <cstdint>
#include <span>
#include <vector>

#include "core/config/scenario.hpp"
#include "core/workload/expert_loads.hpp"

namespace zb {

// A piece of one document that one rank owns. Slices of the same document (on one rank or several) share
// its favourite experts.
struct DocumentSlice {
  std::int64_t document = 0;  // the document's index in the batch
  std::int64_t tokens = 0;
};

// [rank] → the slices that rank owns: the token layout the MoE layer sees (after attention, before dispatch).
using TokenLayout = std::vector<std::vector<DocumentSlice>>;

// Each rank's tokens as one document of its own (document id = rank), for callers that know only counts.
[[nodiscard]] TokenLayout layout_of_counts(std::span<const std::int64_t> tokens_per_rank);

class MoeRouter {
 public:
  // Throws std::invalid_argument for a dense spec (experts == 0), top_k outside [1, experts], knobs out of
  // the ranges the scenario loader enforces, or layers < 1.
  MoeRouter(const MoeSpec& moe, int layers, std::uint64_t seed);

  // The routing of one layer in one iteration over `layout`. Throws std::out_of_range for a layer outside
  // [0, layers) and std::invalid_argument for a negative token count.
  [[nodiscard]] ExpertLoads route(int iteration, int layer, const TokenLayout& layout) const;

  // A layer drawn uniformly from [0, layers) for `iteration`, from a stream of its own: the layer whose
  // routing stands for all of them in a one-layer Program (docs/MOE.md, "One layer stands for all").
  [[nodiscard]] int sampled_layer(int iteration) const;

  // Layer `layer`'s expert popularity p_l (sums to 1).
  [[nodiscard]] std::span<const double> popularity(int layer) const;

  // The top_k distinct favourite experts of `document` in (iteration, layer), in the order drawn.
  [[nodiscard]] std::vector<int> favourite_experts(int iteration, int layer, std::int64_t document) const;

  [[nodiscard]] const MoeSpec& spec() const { return moe_; }
  [[nodiscard]] int layers() const { return static_cast<int>(popularity_.size()); }

 private:
  MoeSpec moe_;
  std::uint64_t seed_;
  std::vector<std::vector<double>> popularity_;  // [layer][expert]
};

}  // namespace zb
