// The MoE layer of a plan (issue 34, item 4; core/strategies/moe_layer.hpp): every strategy's plan of an MoE
// model carries, per rank and micro-batch, the router, the dispatch, the grouped expert GEMMs and the
// combine; the exchanges move exactly the rows the routing sends between the members of an expert group,
// and the expert GEMMs run exactly the rows their experts received; the plans keep every promise of a plan
// and of a Program (rendezvous safety) under the planner's balanced routing and under the router's.
#include <gtest/gtest.h>

#include <map>
#include <numeric>

#include "core/lower/lower.hpp"
#include "core/lower/verify_program.hpp"
#include "core/plan/plan_format.hpp"
#include "core/plan/verify.hpp"
#include "core/strategies/moe_layer.hpp"
#include "core/strategies/strategy.hpp"
#include "support.hpp"

namespace zb {
namespace {

// The small test model with 16 experts of width 512, top-2, and one shared expert.
ModelSpec small_moe_model(int shared = 1) {
  ModelSpec m = test::small_model();
  m.moe.experts = 16;
  m.moe.top_k = 2;
  m.moe.shared_experts = shared;
  m.moe.expert_ffn_hidden = 512;
  m.moe.routing.skew = 0.5;
  m.moe.routing.document_correlation = 0.5;
  return m;
}

Scenario moe_scenario(int nodes, int expert_degree) {
  Scenario s = test::preset_scenario("dgx-h200", nodes, "llama-7b");
  s.model = small_moe_model();
  s.parallelism.expert = expert_degree;
  s.passes = Passes::fwd_bwd;
  return s;
}

std::vector<const plan::Op*> ops_named(const plan::Plan& p, int rank, const std::string& name) {
  std::vector<const plan::Op*> out;
  for (const plan::Op& op : p.ranks[static_cast<std::size_t>(rank)].ops)
    if (op.name == name) out.push_back(&op);
  return out;
}

std::vector<std::int64_t> random_lengths(Rng& rng) {
  std::vector<std::int64_t> lengths;
  const int n = 1 + static_cast<int>(rng.below(14));
  for (int i = 0; i < n; ++i)
    lengths.push_back(rng.below(3) == 0 ? 1 + static_cast<std::int64_t>(rng.below(64))
                                        : 1 + static_cast<std::int64_t>(rng.below(1ULL << 15)));
  return lengths;
}

// Every strategy and option, on one and two nodes and expert degrees inside a node and across both, with
// random batches: the plan verifies, lowers to a rendezvous-safe Program, and does again once the router's
// choices for an iteration have resized it.
TEST(MoeLayerPlans, EveryStrategyKeepsEveryPromiseUnderBalancedAndRealisedRouting) {
  int with_layer = 0;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    Rng rng(seed, 34);
    const int nodes = 1 + static_cast<int>(seed % 2);
    const int e = seed % 3 == 0 ? 1 : (nodes == 2 && seed % 3 == 1 ? 16 : 8) / (seed % 2 == 0 ? 2 : 1);
    const Scenario s = moe_scenario(nodes, e);
    const CostModel cost(s);
    const MoeRouter router(s.model.moe, s.model.layers, seed);
    const std::vector<std::int64_t> lengths = random_lengths(rng);
    for (const SystemSpec& sys : test::registered_variants(s.cluster.world_size(), {1})) {
      plan::Plan p = make_strategy(sys, s, cost)->make_plan(test::batch_of(lengths));
      const std::string what = "seed " + std::to_string(seed) + " e " + std::to_string(e) + " " + sys.label;
      auto problems =
          plan::verify(p, {.token_capacity = cost.token_capacity_per_gpu(), .heads = s.model.heads});
      ASSERT_TRUE(problems.empty()) << what << ": " << problems.front();
      if (!p.feasible() || splits_gemms(p)) continue;
      ASSERT_TRUE(p.info.contains("moe_layer")) << what;
      ++with_layer;
      for (const int iteration : {-1, 0, 3}) {
        if (iteration >= 0) route_moe_layer(p, cost, realised_routing(p, router, iteration));
        problems = plan::verify(p, {.token_capacity = cost.token_capacity_per_gpu(), .heads = s.model.heads});
        ASSERT_TRUE(problems.empty()) << what << " iteration " << iteration << ": " << problems.front();
        const lower::Program program = lower::lower(p, cost, {.backward = true});
        const auto faults = lower::verify(program);
        ASSERT_TRUE(faults.empty()) << what << " iteration " << iteration << ": " << faults.front();
      }
    }
  }
  EXPECT_GT(with_layer, 40);
}

// One plan, routed by the router: what a rank dispatches to a member is the choices of its tokens for that
// member's experts, in hidden rows; the combine returns exactly those rows; a rank's expert GEMMs run the
// rows its experts received from the whole group (its own included); the router and the shared experts
// run the rank's own tokens.
TEST(MoeLayerPlans, ExchangesMoveExactlyTheRoutedRowsAndExpertGemmsRunThem) {
  const Scenario s = moe_scenario(2, 8);
  const CostModel cost(s);
  const MoeRouter router(s.model.moe, s.model.layers, 7);
  plan::Plan p = make_strategy(test::system("ring-cp"), s, cost)
                     ->make_plan(test::batch_of({20000, 9000, 4000, 1500, 700, 300, 90}));
  ASSERT_TRUE(p.feasible());
  const MoeRouting routing = realised_routing(p, router, 2);
  route_moe_layer(p, cost, routing);
  ASSERT_EQ(routing.micro_batches.size(), static_cast<std::size_t>(p.micro_batches));
  const double row = cost.hidden_bytes(1.0);
  const int per_rank = s.model.moe.experts / 8;
  const auto sent = [&](const ExpertLoads& l, int from, int to) {
    std::int64_t n = 0;
    for (int x = to % 8 * per_rank; x < (to % 8 + 1) * per_rank; ++x) n += l.routed_of(from, x);
    return n;
  };
  const std::vector<TokenLayout> layouts = moe_token_layouts(p);
  for (int r = 0; r < p.world_size; ++r) {
    const auto dispatch = ops_named(p, r, "dispatch");
    const auto combine = ops_named(p, r, "combine");
    const auto up = ops_named(p, r, "expert_up");
    ASSERT_EQ(dispatch.size(), static_cast<std::size_t>(p.micro_batches)) << "rank " << r;
    ASSERT_EQ(combine.size(), dispatch.size());
    ASSERT_EQ(up.size(), dispatch.size());
    for (std::size_t i = 0; i < dispatch.size(); ++i) {
      const plan::Op& d = *dispatch[i];
      const ExpertLoads& loads = routing.micro_batches[static_cast<std::size_t>(d.micro_batch)];
      ASSERT_EQ(d.collective_ranks.size(), 8U);
      EXPECT_EQ(d.collective_ranks.front(), r / 8 * 8);
      std::int64_t received = 0;
      for (std::size_t j = 0; j < 8; ++j) {
        const int peer = d.collective_ranks[j];
        const std::int64_t out =
            peer == r ? 0 : std::llround(row * static_cast<double>(sent(loads, r, peer)));
        const std::int64_t back =
            peer == r ? 0 : std::llround(row * static_cast<double>(sent(loads, peer, r)));
        EXPECT_EQ(d.peer_bytes[j], out) << "rank " << r << " to " << peer;
        EXPECT_EQ(combine[i]->peer_bytes[j], back) << "rank " << r << " back to " << peer;
        received += sent(loads, peer, r);
      }
      EXPECT_EQ(up[i]->m, received) << "rank " << r;
      EXPECT_EQ(d.bytes, std::accumulate(d.peer_bytes.begin(), d.peer_bytes.end(), std::int64_t{0}));
    }
    for (const plan::Op* router_op : ops_named(p, r, "router")) {
      std::int64_t tokens = 0;
      for (const DocumentSlice& slice :
           layouts[static_cast<std::size_t>(router_op->micro_batch)][static_cast<std::size_t>(r)])
        tokens += slice.tokens;
      EXPECT_EQ(router_op->m, tokens);
      EXPECT_EQ(router_op->n, s.model.moe.experts);
    }
  }
  EXPECT_EQ(p.info["moe_layer"]["routing"], "realised");
  // The router sees a rank's pieces of one document (a zigzag rank's two chunks) as one slice.
  for (const TokenLayout& layout : layouts) {
    for (const std::vector<DocumentSlice>& slices : layout) {
      std::map<std::int64_t, int> seen;
      for (const DocumentSlice& slice : slices) EXPECT_EQ(++seen[slice.document], 1);
    }
  }
}

// Dropless routing keeps every choice: over a micro-batch the expert GEMMs of all ranks run top_k rows per
// token, however uneven the router, and the planner's balanced routing gives every rank the same share of
// each of its tokens' choices (within one).
TEST(MoeLayerPlans, ExpertRowsAddUpToTopKPerTokenAndTheBalancedRoutingIsEven) {
  const Scenario s = moe_scenario(2, 4);
  const CostModel cost(s);
  const MoeRouter router(s.model.moe, s.model.layers, 3);
  const plan::Plan balanced = make_strategy(test::system("zeppelin"), s, cost)
                                  ->make_plan(test::batch_of({30000, 12000, 5000, 2000, 800, 100, 40, 7}));
  ASSERT_TRUE(balanced.feasible());
  const MoeRouting even = balanced_routing(balanced, s.model.moe);
  for (const ExpertLoads& loads : even.micro_batches) {
    for (int r = 0; r < loads.ranks; ++r) {
      std::int64_t lo = INT64_MAX, hi = 0;
      for (int x = 0; x < loads.experts; ++x) {
        lo = std::min(lo, loads.routed_of(r, x));
        hi = std::max(hi, loads.routed_of(r, x));
      }
      EXPECT_LE(hi - lo, 1) << "rank " << r;
    }
  }
  for (const int iteration : {0, 1}) {
    plan::Plan p = balanced;
    route_moe_layer(p, cost, realised_routing(p, router, iteration));
    std::map<int, std::int64_t> rows, tokens;
    for (int r = 0; r < p.world_size; ++r) {
      for (const plan::Op* op : ops_named(p, r, "expert_up")) rows[op->micro_batch] += op->m;
      for (const plan::Op* op : ops_named(p, r, "router")) tokens[op->micro_batch] += op->m;
    }
    for (const auto& [mb, n] : tokens) EXPECT_EQ(rows[mb], n * s.model.moe.top_k) << "micro-batch " << mb;
  }
}

// The router's choices are a function of (seed, iteration): the same iteration routes the same, another
// one differently; the representative layer is one of the model's, and its loads are the router's.
TEST(MoeLayerRouting, RealisedRoutingIsTheRoutersRepresentativeLayerAndDeterministic) {
  const Scenario s = moe_scenario(1, 8);
  const CostModel cost(s);
  const MoeRouter router(s.model.moe, s.model.layers, 11);
  const plan::Plan p = make_strategy(test::system("uniform-cp"), s, cost)
                           ->make_plan(test::batch_of({9000, 3000, 1200, 500, 60}));
  ASSERT_TRUE(p.feasible());
  const MoeRouting a = realised_routing(p, router, 5);
  const MoeRouting b = realised_routing(p, router, 5);
  const MoeRouting c = realised_routing(p, router, 6);
  ASSERT_GE(a.layer, 0);
  ASSERT_LT(a.layer, s.model.layers);
  ASSERT_EQ(a.micro_batches.size(), b.micro_batches.size());
  for (std::size_t mb = 0; mb < a.micro_batches.size(); ++mb) {
    EXPECT_EQ(a.micro_batches[mb].routed, b.micro_batches[mb].routed);
    EXPECT_EQ(a.micro_batches[mb].routed, router.route(5, a.layer, moe_token_layouts(p)[mb]).routed);
  }
  bool differs = false;
  for (std::size_t mb = 0; mb < a.micro_batches.size(); ++mb)
    differs |= a.micro_batches[mb].routed != c.micro_batches[mb].routed;
  EXPECT_TRUE(differs);
}

// With expert degree 1 every GPU holds every expert: no exchange, and its expert GEMMs run all of its own
// tokens' choices.
TEST(MoeLayerPlans, ExpertDegreeOneKeepsEveryRowOnItsRank) {
  const Scenario s = moe_scenario(1, 1);
  const CostModel cost(s);
  const plan::Plan p = make_strategy(test::system("packing-dp"), s, cost)
                           ->make_plan(test::batch_of({3000, 2000, 1000, 900, 500, 300, 200, 100}));
  ASSERT_TRUE(p.feasible());
  for (int r = 0; r < p.world_size; ++r) {
    EXPECT_TRUE(ops_named(p, r, "dispatch").empty());
    EXPECT_TRUE(ops_named(p, r, "mlp_up").empty());
    const auto routers = ops_named(p, r, "router");
    const auto ups = ops_named(p, r, "expert_up");
    ASSERT_EQ(routers.size(), ups.size());
    for (std::size_t i = 0; i < ups.size(); ++i) EXPECT_EQ(ups[i]->m, routers[i]->m * s.model.moe.top_k);
  }
}

// The exchanges' parts travel in the plan's JSON and come back as written; a part to the rank itself, or
// parts that do not add up to the op's bytes, are reported by plan::verify.
TEST(MoeLayerPlans, PeerBytesRoundTripThroughJsonAndVerifyChecksThem) {
  const Scenario s = moe_scenario(1, 8);
  const CostModel cost(s);
  const plan::Plan p =
      make_strategy(test::system("ring-cp"), s, cost)->make_plan(test::batch_of({6000, 2000}));
  ASSERT_TRUE(p.feasible());
  const plan::Plan back = plan::from_json(plan::to_json(p), "moe.json");
  for (int r = 0; r < p.world_size; ++r) {
    const auto a = ops_named(p, r, "dispatch"), b = ops_named(back, r, "dispatch");
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i]->peer_bytes, b[i]->peer_bytes);
      EXPECT_EQ(b[i]->collective, plan::CollectiveKind::all_to_all_v);
    }
  }
  plan::Plan broken = p;
  for (plan::Op& op : broken.ranks[3].ops) {
    if (op.name != "dispatch") continue;
    op.peer_bytes[3] = 64;  // rank 3 to itself
    op.bytes += 64;
    break;
  }
  const auto problems =
      plan::verify(broken, {.token_capacity = cost.token_capacity_per_gpu(), .heads = s.model.heads});
  ASSERT_FALSE(problems.empty());
  EXPECT_NE(problems.front().find("to the rank itself"), std::string::npos) << problems.front();
}

}  // namespace
}  // namespace zb
