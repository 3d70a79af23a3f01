// Broken plans must fail loudly and quickly: the executor names the rank and what went wrong, and never
// hangs (receives time out; a failing rank stops the others at once).
#include <gtest/gtest.h>

#include <chrono>

#include "tests/integration/reference_support.hpp"

namespace zb {
namespace {

// A scenario, its cost model and one plan of it (returned as a prvalue: the cost model refers to the
// scenario's cluster, so the three stay together).
struct Prepared {
  Prepared(Scenario s, const SystemSpec& system, std::vector<std::int64_t> lengths)
      : scenario(std::move(s)), cost(scenario.cluster, scenario.model) {
    plan = make_strategy(system, scenario, cost)->make_plan(test::batch_of(std::move(lengths)));
  }
  Scenario scenario;
  CostModel cost;
  plan::Plan plan;
};

Prepared ring_plan() { return Prepared(test::small_cluster(1, 4, false, 3), test::system("ring-cp"), {300, 41}); }

reference::ReferenceOptions quick_options() {
  reference::ReferenceOptions options;
  options.transport = reference::TransportChoice::in_process;
  options.receive_timeout = std::chrono::milliseconds(1500);
  return options;
}

// Runs the plan and returns the error message (empty when it passed), and how long it took.
std::pair<std::string, double> run_expecting_error(const Prepared& p) {
  reference::ReferenceExecutor executor(quick_options());
  const auto start = std::chrono::steady_clock::now();
  std::string message;
  try {
    (void)executor.run(p.plan, RunContext{p.scenario, p.cost});
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::runtime);
    message = e.what();
  }
  return {message, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
}

plan::Op* find_op(plan::Plan& p, int rank, plan::OpKind kind, int nth = 0) {
  for (auto& op : p.ranks[static_cast<std::size_t>(rank)].ops)
    if (op.kind == kind && nth-- == 0) return &op;
  return nullptr;
}

TEST(CorruptedPlans, TheUncorruptedPlanPasses) {
  const Prepared p = ring_plan();
  EXPECT_EQ(run_expecting_error(p).first, "");
}

TEST(CorruptedPlans, DroppedAttentionBlockIsCaughtWithRankSequenceAndToken) {
  Prepared p = ring_plan();
  plan::Op* op = find_op(p.plan, 2, plan::OpKind::attention, 1);  // a ring step with remote keys
  ASSERT_NE(op, nullptr);
  std::vector<plan::AttentionBlock> blocks = plan::expand_blocks(p.plan, 2, *op);
  ASSERT_GE(blocks.size(), 1u);
  blocks.erase(blocks.begin());
  op->blocks = blocks;
  op->zigzag_kv_rank = -1;
  const auto [message, seconds] = run_expecting_error(p);
  EXPECT_NE(message.find("rank 2"), std::string::npos) << message;
  EXPECT_NE(message.find("sequence"), std::string::npos) << message;
  EXPECT_NE(message.find("token"), std::string::npos) << message;
  EXPECT_NE(message.find("float64 reference"), std::string::npos) << message;
}

TEST(CorruptedPlans, SendToTheWrongPeerIsCaughtWithoutHanging) {
  Prepared p = ring_plan();
  plan::Op* send = find_op(p.plan, 0, plan::OpKind::send);
  ASSERT_NE(send, nullptr);
  const int intended = send->peer;
  send->peer = intended == 3 ? 2 : 3;  // another rank, which has no recv for this tag from rank 0
  const auto [message, seconds] = run_expecting_error(p);
  ASSERT_FALSE(message.empty());
  // Either the intended receiver reports the tag it waited for, or the wrong receiver the stray message.
  const bool names_wait = message.find("waited") != std::string::npos && message.find("tag") != std::string::npos;
  const bool names_stray = message.find("none of its recv ops expects it") != std::string::npos;
  EXPECT_TRUE(names_wait || names_stray) << message;
  EXPECT_LT(seconds, 10.0) << "a wrong peer must end in an error within about the receive timeout";
}

TEST(CorruptedPlans, MissingSendEndsInATimeoutNamingRankAndTag) {
  Prepared p = ring_plan();
  plan::Op* send = find_op(p.plan, 0, plan::OpKind::send);
  ASSERT_NE(send, nullptr);
  const int receiver = send->peer;
  const int tag = send->tag;
  send->kind = plan::OpKind::gemm;  // the send silently becomes a tiny GEMM: nothing is ever sent
  send->m = send->n = send->k = 1;
  const auto [message, seconds] = run_expecting_error(p);
  EXPECT_NE(message.find("rank " + std::to_string(receiver) + ": waited"), std::string::npos) << message;
  EXPECT_NE(message.find("KV transfer tag " + std::to_string(tag) + " from rank 0"), std::string::npos) << message;
  EXPECT_LT(seconds, 10.0);
}

TEST(CorruptedPlans, AttentionWithoutItsRecvDependencyIsCaught) {
  Prepared p = ring_plan();
  plan::Op* op = find_op(p.plan, 1, plan::OpKind::attention, 1);
  ASSERT_NE(op, nullptr);
  std::erase_if(op->deps, [&](int d) {
    return p.plan.ranks[1].ops[static_cast<std::size_t>(d)].kind == plan::OpKind::recv;
  });
  const auto [message, seconds] = run_expecting_error(p);
  EXPECT_NE(message.find("nor brought by a recv this op depends on"), std::string::npos) << message;
}

TEST(CorruptedPlans, RoutedSendThroughAMissingProxyIsReported) {
  Prepared p(test::small_cluster(2, 2, false, 5), test::system("zeppelin"), {2000});
  plan::Op* routed = nullptr;
  for (auto& r : p.plan.ranks)
    for (auto& op : r.ops)
      if (routed == nullptr && op.kind == plan::OpKind::send && op.route.kind == plan::RouteKind::routed) routed = &op;
  if (routed == nullptr) GTEST_SKIP() << "this plan routes nothing";
  routed->route.proxies.pop_back();  // part sizes and proxies no longer agree
  const auto [message, seconds] = run_expecting_error(p);
  EXPECT_NE(message.find("route is malformed"), std::string::npos) << message;
}

}  // namespace
}  // namespace zb
