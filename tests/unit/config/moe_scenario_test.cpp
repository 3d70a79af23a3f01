// Mixture-of-experts models in the scenario file (issue 34, items 1 and 2): the MoE presets, "model.moe"
// over a preset or a dense model, "parallelism.expert", and every bad MoE key refused with exit code 2
// naming its JSON path. A dense scenario reads as it always did.
#include <gtest/gtest.h>

#include <string>

#include "core/common/error.hpp"
#include "core/config/jsonc.hpp"
#include "core/config/presets.hpp"
#include "core/config/scenario_loader.hpp"
#include "tests/unit/config/base_scenario.hpp"

namespace zb {
namespace {

using json = nlohmann::json;

json base_json() {
  return parse_jsonc(test::base_scenario_text, "base.json");  // 2 × dgx-h200: 16 GPUs, llama-7b
}

json with_model(json model, json parallelism = json()) {
  json j = base_json();
  j["model"] = std::move(model);
  if (!parallelism.is_null()) j["parallelism"] = std::move(parallelism);
  return j;
}

Scenario parse(const json& j) {
  return parse_scenario(j.dump(2), "moe/scenario.json");
}

// The problems of a scenario that must be refused, as "path: what hint" lines.
std::string problems_of(const json& j) {
  try {
    (void)parse(j);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    std::string out;
    for (const Problem& p : e.problems()) out += p.where.json_path + ": " + p.what + " " + p.hint + "\n";
    return out;
  }
  ADD_FAILURE() << "the scenario was accepted";
  return {};
}

void expect_refused(const json& j, const std::string& path, const std::string& part) {
  const std::string problems = problems_of(j);
  EXPECT_NE(problems.find(path + ": "), std::string::npos) << problems;
  EXPECT_NE(problems.find(part), std::string::npos) << problems;
}

TEST(MoeScenario, ADenseScenarioStaysDense) {
  const Scenario s = parse(base_json());
  EXPECT_FALSE(s.model.has_experts());
  EXPECT_EQ(s.model.moe.experts, 0);
  EXPECT_EQ(s.parallelism.expert, 1);
}

TEST(MoeScenario, PresetsCarryTheirExpertShape) {
  const Scenario mixtral = parse(with_model({{"preset", "mixtral-8x7b"}}, {{"expert", 8}}));
  EXPECT_TRUE(mixtral.model.has_experts());
  EXPECT_EQ(mixtral.model.moe.experts, 8);
  EXPECT_EQ(mixtral.model.moe.top_k, 2);
  EXPECT_EQ(mixtral.model.moe.expert_ffn_hidden, 14336);
  EXPECT_FALSE(mixtral.model.moe.capacity_factor.has_value());  // dropless
  EXPECT_EQ(mixtral.parallelism.expert, 8);

  const Scenario qwen = parse(with_model({{"preset", "qwen1.5-moe-a2.7b"}}, {{"expert", 4}, {"tensor", 2}}));
  EXPECT_EQ(qwen.model.moe.experts, 60);
  EXPECT_EQ(qwen.model.moe.shared_experts, 4);
  EXPECT_EQ(qwen.parallelism.tensor, 2);
  EXPECT_EQ(qwen.parallelism.expert, 4);
}

TEST(MoeScenario, KeysOverrideThePresetOneByOne) {
  const Scenario s = parse(with_model(
      {{"preset", "mixtral-8x7b"},
       {"moe",
        {{"top_k", 1}, {"capacity_factor", 1.25}, {"routing", {{"skew", 1.5}, {"layer_drift", 0}}}}}}));
  EXPECT_EQ(s.model.moe.experts, 8);
  EXPECT_EQ(s.model.moe.top_k, 1);
  ASSERT_TRUE(s.model.moe.capacity_factor.has_value());
  EXPECT_DOUBLE_EQ(*s.model.moe.capacity_factor, 1.25);
  EXPECT_DOUBLE_EQ(s.model.moe.routing.skew, 1.5);
  EXPECT_DOUBLE_EQ(s.model.moe.routing.layer_drift, 0);
  EXPECT_DOUBLE_EQ(s.model.moe.routing.document_correlation, RouterLoadSpec{}.document_correlation);

  const Scenario back =
      parse(with_model({{"preset", "mixtral-8x7b"}, {"moe", {{"capacity_factor", "dropless"}}}}));
  EXPECT_FALSE(back.model.moe.capacity_factor.has_value());
}

TEST(MoeScenario, ADenseModelBecomesMoeWithExpertsTopKAndWidth) {
  const Scenario s = parse(with_model(
      {{"preset", "llama-7b"}, {"moe", {{"experts", 16}, {"top_k", 2}, {"expert_ffn_hidden", 2752}}}},
      {{"expert", 16}}));
  EXPECT_EQ(s.model.moe.experts, 16);
  EXPECT_EQ(s.model.moe.shared_experts, 0);
  EXPECT_EQ(s.parallelism.expert, 16);
  expect_refused(with_model({{"preset", "llama-7b"}, {"moe", {{"experts", 16}}}}), "model.moe.top_k",
                 "missing required key");
  expect_refused(with_model({{"preset", "llama-7b"}, {"moe", json::object()}}), "model.moe.expert_ffn_hidden",
                 "missing required key");
}

TEST(MoeScenario, TopKAboveTheExpertCountIsRefused) {
  expect_refused(with_model({{"preset", "mixtral-8x7b"}, {"moe", {{"top_k", 9}}}}), "model.moe.top_k",
                 "top_k (9) is above the expert count (8)");
  expect_refused(with_model({{"preset", "mixtral-8x7b"}, {"moe", {{"experts", 1}}}}), "model.moe.top_k",
                 "the preset's top_k is kept");
}

TEST(MoeScenario, CapacityFactorIsPositiveOrDropless) {
  expect_refused(with_model({{"preset", "mixtral-8x7b"}, {"moe", {{"capacity_factor", -1}}}}),
                 "model.moe.capacity_factor", "must be in (0");
  expect_refused(with_model({{"preset", "mixtral-8x7b"}, {"moe", {{"capacity_factor", 0}}}}),
                 "model.moe.capacity_factor", "must be in (0");
  expect_refused(with_model({{"preset", "mixtral-8x7b"}, {"moe", {{"capacity_factor", "none"}}}}),
                 "model.moe.capacity_factor", "\"dropless\"");
  expect_refused(with_model({{"preset", "mixtral-8x7b"}, {"moe", {{"capacity_factor", true}}}}),
                 "model.moe.capacity_factor", "expected a number or \"dropless\"");
}

TEST(MoeScenario, RoutingKnobsStayInTheirRanges) {
  expect_refused(with_model({{"preset", "mixtral-8x7b"}, {"moe", {{"routing", {{"skew", -0.5}}}}}}),
                 "model.moe.routing.skew", "must be in [0");
  expect_refused(
      with_model({{"preset", "mixtral-8x7b"}, {"moe", {{"routing", {{"document_correlation", 2}}}}}}),
      "model.moe.routing.document_correlation", "must be in [0, 1]");
  expect_refused(with_model({{"preset", "mixtral-8x7b"}, {"moe", {{"routing", {{"layer_drfit", 0.5}}}}}}),
                 "model.moe.routing.layer_drfit", "did you mean \"layer_drift\"?");
  expect_refused(with_model({{"preset", "mixtral-8x7b"}, {"moe", {{"topk", 2}}}}), "model.moe.topk",
                 "did you mean \"top_k\"?");
}

TEST(MoeScenario, ExpertDegreeMustDivideTheExpertsAndTheRanks) {
  // qwen1.5-moe-a2.7b has 60 experts; the base cluster has 16 GPUs.
  expect_refused(with_model({{"preset", "qwen1.5-moe-a2.7b"}}, {{"expert", 16}}), "parallelism.expert",
                 "must divide the model's 60 experts");
  expect_refused(with_model({{"preset", "qwen1.5-moe-a2.7b"}}, {{"expert", 5}}), "parallelism.expert",
                 "must divide the 16 data- and context-parallel ranks");
  // Under TP 4 the strategies plan on 4 ranks: 8 expert groups no longer fit.
  expect_refused(with_model({{"preset", "mixtral-8x7b"}}, {{"expert", 8}, {"tensor", 4}}),
                 "parallelism.expert", "must divide the 4 data- and context-parallel ranks");
  expect_refused(with_model({{"preset", "mixtral-8x7b"}}, {{"expert", 0}}), "parallelism.expert",
                 "between 1 and");
}

TEST(MoeScenario, ExpertParallelismNeedsExperts) {
  expect_refused(with_model({{"preset", "llama-7b"}}, {{"expert", 2}}), "parallelism.expert",
                 "this model is dense");
  EXPECT_EQ(parse(with_model({{"preset", "llama-7b"}}, {{"expert", 1}})).parallelism.expert, 1);
}

TEST(MoeScenario, TensorParallelismSplitsTheExpertsToo) {
  expect_refused(with_model({{"preset", "llama-7b"},
                             {"moe", {{"experts", 8}, {"top_k", 2}, {"expert_ffn_hidden", 1001}}}},
                            {{"tensor", 8}}),
                 "parallelism.tensor", "must divide expert_ffn_hidden (1001)");
}

TEST(MoePresets, ListedAfterTheDenseOnesWithTheirPublishedShapes) {
  const ModelPreset* mixtral = find_model_preset("mixtral-8x7b");
  ASSERT_NE(mixtral, nullptr);
  EXPECT_EQ(mixtral->spec.kv_heads, 8);
  EXPECT_EQ(mixtral->spec.layers, 32);
  const ModelPreset* qwen = find_model_preset("qwen1.5-moe-a2.7b");
  ASSERT_NE(qwen, nullptr);
  EXPECT_EQ(qwen->spec.moe.top_k, 4);
  EXPECT_EQ(qwen->spec.moe.expert_ffn_hidden, 1408);
  EXPECT_EQ(qwen->spec.vocab, 151936);
  const ModelPreset* paper = find_model_preset("moe-8x550m");
  ASSERT_NE(paper, nullptr);
  // The reading's dense base is 550M parameters: attention 4h², SwiGLU 3·h·f per layer, untied embeddings.
  const ModelSpec& m = paper->spec;
  const double per_layer = 4.0 * m.hidden * m.hidden + 3.0 * m.hidden * m.ffn_hidden;
  const double dense_parameters = m.layers * per_layer + 2.0 * m.vocab * m.hidden;
  EXPECT_NEAR(dense_parameters / 1e6, 550, 5);
  EXPECT_EQ(m.moe.experts, 8);
  EXPECT_EQ(m.moe.top_k, 2);
  for (const ModelPreset& p : model_presets()) {
    SCOPED_TRACE(p.name);
    if (!p.spec.has_experts()) continue;
    EXPECT_LE(p.spec.moe.top_k, p.spec.moe.experts);
    EXPECT_GT(p.spec.moe.expert_ffn_hidden, 0);
    EXPECT_FALSE(p.spec.moe.capacity_factor.has_value());
    EXPECT_EQ(p.spec.hidden % p.spec.heads, 0);
    EXPECT_EQ(p.spec.heads % p.spec.kv_heads, 0);
  }
}

}  // namespace
}  // namespace zb
