// An MoE model on the reference backend (issue 34): every strategy's plan with its MoE layer, resized by the
// router's choices, runs forward and backward on real numbers; the attention verifies as for a dense model
// and every dispatch and combine message arrives whole (core/exec/reference/expert_rows.hpp), which the
// checker would refuse otherwise (a changed row, a short payload).
#include <gtest/gtest.h>

#include <cstring>

#include "core/exec/reference/all_to_all_v.hpp"
#include "core/exec/reference/expert_rows.hpp"
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

TEST(MoeReference, TheCheckerRefusesAChangedOrShortPayload) {
  lower::Program program;
  lower::Message m;
  m.purpose = lower::Purpose::expert;
  m.src = 0;
  m.dst = 1;
  m.rows = 3;
  program.messages.push_back(m);
  const reference::AttentionDims dims;
  const std::size_t floats = 3 * static_cast<std::size_t>(dims.q_width());
  reference::Bytes zeros = reference::collective_payload_header(0);
  zeros.resize(zeros.size() + floats * sizeof(float));  // the right size, every stamp but the first wrong
  EXPECT_THROW(reference::check_expert_rows(program, 0, 1, zeros, dims, "test"), Error);
  reference::Bytes short_payload = reference::collective_payload_header(0);
  short_payload.resize(short_payload.size() + (floats - 1) * sizeof(float));
  EXPECT_THROW(reference::check_expert_rows(program, 0, 1, short_payload, dims, "test"), Error);
}

}  // namespace
}  // namespace zb
