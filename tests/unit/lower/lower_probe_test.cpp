// The probe plans on which the old executors disagreed, now one Program each: every executor and the
// estimate read the same instructions, so they agree, or the plan is rejected naming the rank and op.
#include <gtest/gtest.h>

#include "core/common/error.hpp"
#include "core/lower/estimate.hpp"
#include "core/lower/lower.hpp"
#include "core/lower/schedule.hpp"
#include "core/lower/verify_program.hpp"
#include "tests/unit/sim/sim_test_support.hpp"

namespace zb {
namespace {

using sim_test::add_op;
using sim_test::add_transfer;
using sim_test::attention_op;
using sim_test::cluster;
using sim_test::empty_plan;

// Under the pure flow model, as sim_test::simulate runs it: the estimate charges a message's overhead
// without queueing it behind its sender's others and knows no interference (docs/SIMULATOR.md), so the
// two agree exactly only there.
double estimated_forward(const plan::Plan& p, const ClusterSpec& c) {
  const CostModel cost(c, sim_test::llama_7b(), sim_test::flow_model_profile());
  const lower::Program program = lower::lower(p, cost, {.backward = false});
  return lower::estimate(program, lower::nominal_transfers(program, cost)).forward;
}

std::string lowering_error(const plan::Plan& p, const ClusterSpec& c) {
  const CostModel cost(c, sim_test::llama_7b());
  try {
    (void)lower::lower(p, cost);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::vector<std::string> program_problems(const plan::Plan& p, const ClusterSpec& c) {
  const CostModel cost(c, sim_test::llama_7b());
  return lower::verify(lower::lower(p, cost));
}

TEST(ProbePlans, RecvListedBeforeItsSendOnBothRanksIsEstimatedAsSimulated) {
  // Each rank lists its recv first. Comm instructions have no stream order, so nothing waits: the old
  // predictor parked both ranks on their recv and estimated 0 ms.
  const ClusterSpec c = cluster(1, 2, 1);
  plan::Plan p = empty_plan(c);
  plan::Op recv_on_0;
  recv_on_0.kind = plan::OpKind::recv;
  recv_on_0.name = "kv";
  recv_on_0.peer = 1;
  recv_on_0.tag = 1;
  recv_on_0.bytes = 256 << 20;
  add_op(p, 0, recv_on_0);
  plan::Op recv_on_1 = recv_on_0;
  recv_on_1.peer = 0;
  recv_on_1.tag = 0;
  add_op(p, 1, recv_on_1);
  plan::Op send_from_0 = recv_on_1;
  send_from_0.kind = plan::OpKind::send;
  send_from_0.peer = 1;
  add_op(p, 0, send_from_0);
  plan::Op send_from_1 = recv_on_0;
  send_from_1.kind = plan::OpKind::send;
  send_from_1.peer = 0;
  add_op(p, 1, send_from_1);
  EXPECT_TRUE(program_problems(p, c).empty());
  const double simulated = sim_test::simulate(p, c).layer.forward;
  EXPECT_GT(simulated, 0.5e-3);
  EXPECT_NEAR(estimated_forward(p, c), simulated, 1e-9 * simulated);
}

TEST(ProbePlans, TagsReusedAcrossRankPairsAreTwoTransfers) {
  const ClusterSpec c = cluster(1, 4, 1);
  plan::Plan once = empty_plan(c);
  add_transfer(once, 0, 1, 64 << 20, 5);
  plan::Plan twice = empty_plan(c);
  add_transfer(twice, 0, 1, 64 << 20, 5);
  const auto [send, recv] = add_transfer(twice, 2, 3, 128 << 20, 5);  // same tag, other pair
  (void)send;
  add_op(twice, 3, attention_op(1e9, 4096, {recv}));
  const CostModel cost(c, sim_test::llama_7b(), sim_test::flow_model_profile());
  const lower::Program program = lower::lower(twice, cost, {.backward = false});
  EXPECT_TRUE(lower::verify(program).empty());
  const double estimate = estimated_forward(twice, c);
  const double expected = cost.transfer_time(128 << 20, cost.nvlink(), LinkClass::nvlink) +
                          lower::attention_seconds(twice.ranks[3].ops[1], cost, Pass::fwd);
  EXPECT_NEAR(estimate, expected, 1e-12);
  EXPECT_NEAR(sim_test::simulate(twice, c).layer.forward, expected, 1e-9);
  EXPECT_GT(estimate, estimated_forward(once, c));
}

TEST(ProbePlans, TwoRemapsOfOneMicroBatchAndDirectionAreBothCharged) {
  const ClusterSpec c = cluster(2, 1, 1);
  auto remap_plan = [&](int remaps) {
    plan::Plan p = empty_plan(c);
    p.sequences.push_back({0, 1 << 20, 0});
    for (int k = 0; k < remaps; ++k) {
      for (int r = 0; r < 2; ++r) {
        plan::Op op;
        op.kind = plan::OpKind::remap;
        op.name = "remap to linear";
        op.direction = plan::RemapDirection::to_linear;
        op.moves = {{0, 1, {0, 0, 1 << 20}}};
        (r == 0 ? op.bytes_out : op.bytes_in) = 8LL << 30;
        if (k > 0) op.deps = {k - 1};  // one after the other: the second may not hide in the first
        add_op(p, r, op);
      }
    }
    return p;
  };
  const double one = sim_test::simulate(remap_plan(1), c).layer.forward;
  const double two = sim_test::simulate(remap_plan(2), c).layer.forward;
  EXPECT_GT(one, 0.1);
  EXPECT_NEAR(two, 2 * one, 1e-9 * one);  // the old simulator dropped the second exchange: two == one
  EXPECT_NEAR(estimated_forward(remap_plan(2), c), 2 * estimated_forward(remap_plan(1), c), 1e-9);
}

TEST(ProbePlans, RendezvousCycleIsRejectedNamingRankAndInstruction) {
  // Each rank sends, then receives once its send is done. With buffered sends this runs; with NCCL's
  // rendezvous each send waits for a recv that waits for the other send: a deadlock.
  const ClusterSpec c = cluster(1, 2, 1);
  plan::Plan p = empty_plan(c);
  const auto [s01, r01] = add_transfer(p, 0, 1, 1 << 20, 0);
  (void)r01;
  plan::Op recv_back;
  recv_back.kind = plan::OpKind::recv;
  recv_back.name = "kv";
  recv_back.peer = 1;
  recv_back.tag = 1;
  recv_back.bytes = 1 << 20;
  recv_back.deps = {s01};
  plan::Op send_back = recv_back;
  send_back.kind = plan::OpKind::send;
  send_back.peer = 0;
  // Rank 1: the send back comes first and its recv from rank 0 waits for it.
  p.ranks[1].ops.clear();
  send_back.deps = {};
  const int s10 = add_op(p, 1, send_back);
  plan::Op recv_from_0;
  recv_from_0.kind = plan::OpKind::recv;
  recv_from_0.name = "kv";
  recv_from_0.peer = 0;
  recv_from_0.tag = 0;
  recv_from_0.bytes = 1 << 20;
  recv_from_0.deps = {s10};
  add_op(p, 1, recv_from_0);
  add_op(p, 0, recv_back);
  const auto problems = program_problems(p, c);
  ASSERT_FALSE(problems.empty());
  EXPECT_NE(problems.front().find("deadlock"), std::string::npos) << problems.front();
  EXPECT_NE(problems.front().find("rank 0 instr 0"), std::string::npos) << problems.front();
}

TEST(ProbePlans, SecondTransferWithTheSameSourceDestinationAndTagIsRejected) {
  const ClusterSpec c = cluster(1, 2, 1);
  plan::Plan p = empty_plan(c);
  add_transfer(p, 0, 1, 1 << 20, 3);
  add_transfer(p, 0, 1, 1 << 20, 3);
  const std::string error = lowering_error(p, c);
  EXPECT_NE(error.find("rank 0"), std::string::npos) << error;
  EXPECT_NE(error.find("plan op 1"), std::string::npos) << error;
  EXPECT_NE(error.find("second send to rank 1 with tag 3"), std::string::npos) << error;
}

TEST(ProbePlans, SendWithoutItsRecvIsRejected) {
  const ClusterSpec c = cluster(1, 2, 1);
  plan::Plan p = empty_plan(c);
  add_transfer(p, 0, 1, 1 << 20, 3);
  p.ranks[1].ops.clear();
  const std::string error = lowering_error(p, c);
  EXPECT_NE(error.find("rank 0"), std::string::npos) << error;
  EXPECT_NE(error.find("has no recv from this rank with this tag"), std::string::npos) << error;
}

TEST(ProbePlans, RoutedSendBecomesRelayInstructionsOnTheProxies) {
  const ClusterSpec c = sim_test::dgx_h200(2);
  plan::Plan p = empty_plan(c);
  plan::Route route;
  route.kind = plan::RouteKind::routed;
  route.chunks = 2;
  for (int i = 0; i < 8; ++i) {
    route.proxies.push_back(i);
    route.peer_proxies.push_back(8 + i);
    route.part_bytes.push_back(1 << 20);
  }
  add_transfer(p, 0, 9, 8 << 20, 0, {}, {}, route);
  const CostModel cost(c, sim_test::llama_7b());
  const lower::Program program = lower::lower(p, cost, {.backward = false});
  EXPECT_TRUE(lower::verify(program).empty());
  // Proxy 3 relays part 3 onto its NIC: one recv and one send carrying the part's 2 chunks, on its relay
  // stream, though its own plan has no op at all. The send streams the chunks as they arrive.
  const auto& proxy = program.ranks[3].instrs;
  ASSERT_EQ(proxy.size(), 2u);
  for (const auto& in : proxy) EXPECT_EQ(in.stream, lower::Stream::relay);
  EXPECT_EQ(proxy[0].kind, lower::InstrKind::recv);
  EXPECT_EQ(proxy[1].kind, lower::InstrKind::send);
  EXPECT_EQ(proxy[1].peer, 11);
  EXPECT_EQ(proxy[1].bytes, 1 << 20);
  EXPECT_EQ(proxy[1].chunks, 2);
  EXPECT_EQ(proxy[1].stream_from, 0);
  EXPECT_EQ(proxy[1].leg, lower::LegRole::nic);
  // The destination gets one last-leg recv per part (part 1 arrives directly from proxy 1's peer 9).
  int last_legs = 0;
  for (const auto& in : program.ranks[9].instrs) last_legs += in.last_leg ? 1 : 0;
  EXPECT_EQ(last_legs, 8);
}

// Chunked legs pipeline: with k chunks over h hops of equal chunk time t, the last byte arrives after
// (h + k − 1)·t, not h·k·t (store and forward) nor h·t (no chunking cost at all).
TEST(ProbePlans, ChunkedRelayLegsPipelineInTheSchedule) {
  const ClusterSpec c = sim_test::dgx_h200(2);
  plan::Plan p = empty_plan(c);
  const plan::Route route{.kind = plan::RouteKind::routed,
                          .proxies = {1},
                          .peer_proxies = {9},
                          .part_bytes = {4 << 20},
                          .chunks = 4};
  add_transfer(p, 0, 10, 4 << 20, 0, {}, {}, route);
  const CostModel cost(c, sim_test::llama_7b());
  const lower::Program program = lower::lower(p, cost, {.backward = false});
  ASSERT_TRUE(lower::verify(program).empty());
  lower::TransferModel model;
  model.p2p = [](int, int, std::int64_t bytes, const lower::Message&) {
    return static_cast<double>(bytes) * 1e-9;
  };
  model.collective = [](const lower::Collective&) { return 0.0; };
  const lower::Schedule s = lower::schedule(program, model);
  ASSERT_TRUE(s.complete);
  const double t = (1 << 20) * 1e-9;  // one chunk on one hop
  EXPECT_NEAR(s.finish, (3 + 4 - 1) * t, 1e-12);
}

}  // namespace
}  // namespace zb
