// FLOPs and bytes of one layer against hand-computed values for llama-7b (MHA) and llama3-8b (GQA).
#include <string>

#include <gtest/gtest.h>

#include "core/common/error.hpp"
#include "core/cost/cost_model.hpp"
#include "tests/unit/cost/cost_test_specs.hpp"

namespace zb {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

CostModel llama_7b_on_h200() {
  return CostModel(test::dgx_h200(2), test::llama_7b());
}
CostModel llama3_8b_on_h200() {
  return CostModel(test::dgx_h200(2), test::llama3_8b());
}

TEST(CostFlops, ForwardAttentionOfOneCausal4096Sequence) {
  const CostModel cost = llama_7b_on_h200();
  const double pairs = static_cast<double>(CostModel::attention_pairs(0, 4096, 0, 4096, true));
  const double expected = 4.0 * 4096 * (4096.0 * 4097.0 / 2.0);  // 4·hidden·pairs = 137,472,507,904
  EXPECT_DOUBLE_EQ(cost.attention_fwd_flops(pairs), expected);
  EXPECT_DOUBLE_EQ(expected, 137'472'507'904.0);
  // ≈ 2·s²·hidden, the paper's approximation.
  EXPECT_NEAR(cost.attention_fwd_flops(pairs) / (2.0 * 4096.0 * 4096.0 * 4096.0), 1.0, 1e-3);
  EXPECT_DOUBLE_EQ(cost.attention_bwd_flops(pairs), 2.5 * expected);
}

TEST(CostFlops, AttentionFlopsDoNotDependOnKvHeads) {
  // GQA shrinks K and V, not the number of query-key dot products.
  EXPECT_DOUBLE_EQ(llama_7b_on_h200().attention_fwd_flops(1000),
                   llama3_8b_on_h200().attention_fwd_flops(1000));
}

TEST(CostFlops, ParamsAndLinearFlopsPerTokenLlama7b) {
  const CostModel cost = llama_7b_on_h200();
  // QKV 4096·12288 + O 4096² + MLP 3·4096·11008 = 50,331,648 + 16,777,216 + 135,266,304.
  EXPECT_DOUBLE_EQ(cost.params_per_layer(), 202'375'168.0);
  EXPECT_DOUBLE_EQ(cost.linear_fwd_flops(1), 404'750'336.0);
  EXPECT_DOUBLE_EQ(cost.linear_bwd_flops(1), 809'500'672.0);
  EXPECT_DOUBLE_EQ(cost.linear_fwd_flops(4096), 4096.0 * 404'750'336.0);
  // 32 layers + input and output embeddings. The published 6,738,415,616 also counts the 65 RMSNorm
  // weight vectors (65·4096 = 266,240 parameters), which the model ignores as negligible.
  EXPECT_DOUBLE_EQ(cost.total_params(), 6'738'149'376.0);
}

TEST(CostFlops, ParamsAndLinearFlopsPerTokenLlama3_8bGqa) {
  const CostModel cost = llama3_8b_on_h200();
  // kv_hidden = 8·128 = 1024: QKV 4096·6144 + O 4096² + MLP 3·4096·14336.
  EXPECT_DOUBLE_EQ(cost.params_per_layer(), 25'165'824.0 + 16'777'216.0 + 176'160'768.0);
  EXPECT_DOUBLE_EQ(cost.linear_fwd_flops(1), 436'207'616.0);
  // 32 layers + 2·128256·4096 embeddings; the published 8,030,261,248 adds the RMSNorm weights.
  EXPECT_DOUBLE_EQ(cost.total_params(), 8'029'995'008.0);
}

TEST(CostBytes, KvPerRingStepFor64kOn16RanksLlama7b) {
  const CostModel cost = llama_7b_on_h200();
  const double tokens_per_rank = 65536.0 / 16;  // 4096
  EXPECT_DOUBLE_EQ(cost.kv_bytes(tokens_per_rank), 2.0 * 4096 * 4096 * 2);
  EXPECT_DOUBLE_EQ(cost.kv_bytes(tokens_per_rank), 64 * kMiB);
}

TEST(CostBytes, GqaShrinksKvByHeadRatio) {
  EXPECT_DOUBLE_EQ(llama3_8b_on_h200().kv_bytes(4096), llama_7b_on_h200().kv_bytes(4096) / 4);
  EXPECT_DOUBLE_EQ(llama3_8b_on_h200().kv_bytes(1), 2.0 * 1024 * 2);
}

TEST(CostBytes, HiddenAndQkvRows) {
  EXPECT_DOUBLE_EQ(llama_7b_on_h200().hidden_bytes(10), 10.0 * 4096 * 2);
  EXPECT_DOUBLE_EQ(llama_7b_on_h200().qkv_bytes(10), 10.0 * 3 * 4096 * 2);
  EXPECT_DOUBLE_EQ(llama3_8b_on_h200().qkv_bytes(10), 10.0 * (4096 + 2048) * 2);
}

TEST(CostBytes, Fp32DoublesBytes) {
  ModelSpec model = test::llama_7b();
  model.dtype = "fp32";
  model.dtype_bytes = 4;
  const CostModel cost(test::dgx_h200(1), model);
  EXPECT_DOUBLE_EQ(cost.kv_bytes(4096), 2 * llama_7b_on_h200().kv_bytes(4096));
}

TEST(CostModelSpec, MalformedModelIsBadInput) {
  ModelSpec model = test::llama_7b();
  model.heads = 0;  // would divide by zero in head_dim()
  model.ffn_hidden = -1;
  try {
    const CostModel cost(test::dgx_h200(1), model);
    FAIL() << "expected zb::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    EXPECT_EQ(e.problems().size(), 2U) << e.what();  // all problems at once
    EXPECT_NE(std::string(e.what()).find("model.heads"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("model.ffn_hidden"), std::string::npos) << e.what();
  }
  model = test::llama_7b();
  model.kv_heads = 5;  // does not divide 32 heads
  EXPECT_THROW(CostModel(test::dgx_h200(1), model), Error);
}

}  // namespace
}  // namespace zb
