// An MoE model on the reference backend (issue 34): every strategy's plan with its MoE layer, resized by the
// router's choices, runs forward and backward on real numbers; the attention verifies as for a dense model,
// and every row of every exchange goes out to the member holding its experts and comes back through them,
// in its place, checked against a float64 evaluation of that member's expert (core/exec/reference/
// expert_rows.hpp); the checks refuse a changed row, a short payload, or another member's expert.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <utility>

#include "core/exec/reference/all_to_all_v.hpp"
#include "core/exec/reference/expert_rows.hpp"
#include "core/exec/reference/in_process_transport.hpp"
#include "core/strategies/moe_layer.hpp"
#include "tests/integration/reference_support.hpp"

namespace zb {
namespace {

Scenario moe_cluster() {
  Scenario s = test::small_cluster(2, 2, false);  // 4 GPUs on 2 nodes: an expert group of 4 spans both
  s.model.moe.experts = 8;
  s.model.moe.top_k = 2;
  s.model.moe.shared_experts = 1;
  s.model.moe.expert_ffn_hidden = 256;
  s.model.moe.routing.skew = 0.7;
  s.parallelism.expert = 4;
  s.passes = Passes::fwd_bwd;
  return s;
}

TEST(MoeReference, EveryStrategyMovesEveryExchangeRowForwardAndBackward) {
  const Scenario s = moe_cluster();
  const CostModel cost(s);
  const MoeRouter router(s.model.moe, s.model.layers, 9);
  const std::vector<std::int64_t> lengths{800, 300, 40, 9, 1};
  int with_layer = 0;
  for (const SystemSpec& system : test::reference_systems(s.cluster)) {
    SCOPED_TRACE(system.label);
    plan::Plan p = make_strategy(system, s, cost)->make_plan(test::batch_of(lengths));
    if (!p.feasible() || !p.info.contains("moe_layer")) continue;
    route_moe_layer(p, cost, realised_routing(p, router, 1));
    ++with_layer;
    reference::ReferenceExecutor executor(test::reference_options_for(system, s, test::in_process_options()));
    try {
      const Trace trace = test::run_plan(executor, p, s, cost);
      EXPECT_NE(trace.model_note.find("backward verified"), std::string::npos) << trace.model_note;
      int exchanges = 0;
      for (const TraceEvent& e : trace.events)
        exchanges += e.name.rfind("dispatch", 0) == 0 || e.name.rfind("combine", 0) == 0;
      EXPECT_EQ(exchanges, 4 * 4 * p.micro_batches) << "dispatch and combine, both passes, 4 ranks";
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
    }
  }
  EXPECT_GT(with_layer, 5);
}

// One exchange pair between ranks 0 and 1, by hand: rank 0's rows go out to rank 1, which returns them
// through its expert; what arrives changed, short, or through another member's expert is refused.
TEST(MoeReference, RowsGoOutToTheExpertsAndComeBackThroughThem) {
  lower::Program program;
  for (const auto& [src, dst] : {std::pair{0, 1}, std::pair{1, 0}}) {
    lower::Message m;
    m.purpose = lower::Purpose::expert;
    m.src = src;
    m.dst = dst;
    m.rows = 3;
    m.collective = static_cast<int>(program.messages.size());
    program.messages.push_back(m);
    lower::Collective c;
    c.expert_exchange = true;
    c.ranks = {0, 1};
    c.messages = {m.collective};
    program.collectives.push_back(c);
  }
  const reference::AttentionDims dims;
  const auto width = static_cast<std::size_t>(dims.q_width());
  const auto payload_of = [&](int message, const std::vector<float>& rows) {
    reference::Bytes b = reference::collective_payload_header(message);
    const auto at = b.size();
    b.resize(at + rows.size() * sizeof(float));
    std::memcpy(b.data() + at, rows.data(), rows.size() * sizeof(float));
    return b;
  };
  reference::InProcessFabric fabric(2);
  reference::InProcessTransport zero(fabric, 0), one(fabric, 1);
  const auto arrived = [](reference::InProcessTransport& at, int src, int collective) {
    std::optional<reference::Bytes> got = at.try_recv(src, reference::collective_tag(collective));
    if (!got) throw std::runtime_error("nothing arrived");
    return *got;
  };
  reference::ExpertRowsKept kept0, kept1;
  reference::send_expert_rows(zero, program, 0, 0, dims, reference::ExpertLeg::out, kept0, "test");
  const reference::Bytes out = arrived(one, 0, 0);
  reference::accept_expert_rows(program, 0, 1, out, dims, reference::ExpertLeg::out, kept1, "test");
  ASSERT_EQ(kept1.size(), 1U) << "rank 1 keeps what rank 0 sent until it returns it";
  reference::send_expert_rows(one, program, 1, 1, dims, reference::ExpertLeg::back, kept1, "test");
  EXPECT_TRUE(kept1.empty());
  EXPECT_NO_THROW(reference::accept_expert_rows(program, 1, 0, arrived(zero, 1, 1), dims,
                                                reference::ExpertLeg::back, kept0, "test"));

  // The same rows through rank 0's expert instead of rank 1's: refused against rank 1's float64 expert.
  std::vector<float> rows(3 * width);
  std::memcpy(rows.data(), out.data() + (out.size() - rows.size() * sizeof(float)),
              rows.size() * sizeof(float));
  std::vector<float> wrong(rows.size());
  for (std::size_t r = 0; r < 3; ++r)
    reference::expert_forward(0, Pass::fwd, std::span<const float>(rows).subspan(r * width, width),
                              std::span<float>(wrong).subspan(r * width, width));
  EXPECT_THROW(reference::accept_expert_rows(program, 1, 0, payload_of(1, wrong), dims,
                                             reference::ExpertLeg::back, kept0, "test"),
               Error);
  // Changed or short on the way out.
  std::vector<float> changed = rows;
  changed[5] += 1.0F;
  reference::ExpertRowsKept scratch;
  EXPECT_THROW(reference::accept_expert_rows(program, 0, 1, payload_of(0, changed), dims,
                                             reference::ExpertLeg::out, scratch, "test"),
               Error);
  rows.pop_back();
  EXPECT_THROW(reference::accept_expert_rows(program, 0, 1, payload_of(0, rows), dims,
                                             reference::ExpertLeg::out, scratch, "test"),
               Error);
  // A return with nothing kept from the receiver.
  reference::ExpertRowsKept nothing;
  EXPECT_THROW(
      reference::send_expert_rows(one, program, 1, 1, dims, reference::ExpertLeg::back, nothing, "test"),
      Error);
}

// The float and float64 experts agree, and members' experts differ.
TEST(MoeReference, TheStandInExpertIsTheSameFunctionInFloatAndFloat64) {
  const std::size_t width = 32;
  std::vector<float> x(width), y(width), z(width);
  std::vector<double> xd(width), yd(width);
  for (std::size_t c = 0; c < width; ++c) xd[c] = x[c] = static_cast<float>(c) / 16.0F - 1.0F;
  reference::expert_forward(3, Pass::fwd, std::span<const float>(x), std::span<float>(y));
  reference::expert_forward(3, Pass::fwd, std::span<const double>(xd), std::span<double>(yd));
  reference::expert_forward(4, Pass::fwd, std::span<const float>(x), std::span<float>(z));
  double differs = 0;
  for (std::size_t c = 0; c < width; ++c) {
    EXPECT_NEAR(y[c], yd[c], 1e-5 * (1 + std::abs(yd[c])));
    differs += std::abs(y[c] - z[c]);
  }
  EXPECT_GT(differs, 0.1);
}

}  // namespace
}  // namespace zb
