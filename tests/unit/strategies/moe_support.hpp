#pragma once
// The MoE scenario the MoE-layer tests share: the small test model with 16 experts of width 512, top-2, one
// shared expert and an uneven router, on `nodes` dgx-h200 nodes under TP `t` and expert degree `e`.
#include "support.hpp"

namespace zb::test {

inline Scenario moe_test_scenario(int nodes, int t, int expert_degree, double skew = 0.5,
                                  double correlation = 0.5) {
  Scenario s = preset_scenario("dgx-h200", nodes, "llama-7b");
  s.model = small_model();
  s.model.moe.experts = 16;
  s.model.moe.top_k = 2;
  s.model.moe.shared_experts = 1;
  s.model.moe.expert_ffn_hidden = 512;
  s.model.moe.routing.skew = skew;
  s.model.moe.routing.document_correlation = correlation;
  s.parallelism.tensor = t;
  s.parallelism.expert = expert_degree;
  s.passes = Passes::fwd_bwd;
  return s;
}

}  // namespace zb::test
