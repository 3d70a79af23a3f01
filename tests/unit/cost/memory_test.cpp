// Model-state memory, activation memory and the per-GPU token capacity derived from them.
#include <gtest/gtest.h>

#include "core/cost/cost_model.hpp"
#include "tests/unit/cost/cost_test_specs.hpp"

namespace zb {
namespace {

constexpr double kLlama7bParams = 6'738'149'376.0;  // 32 layers + input and output embeddings

TEST(CostMemory, ModelStatesReplicateWeightsAndGradsAndShardOptimizer) {
  const CostModel cost(test::dgx_h200(2), test::llama_7b());
  // bf16 weights + grads (4 B/param) on every GPU, fp32 master + Adam m, v (12 B/param) over 16 GPUs.
  EXPECT_DOUBLE_EQ(cost.model_state_bytes_per_gpu(), kLlama7bParams * (4.0 + 12.0 / 16));
  EXPECT_DOUBLE_EQ(cost.model_state_bytes_per_gpu(), 32'006'209'536.0);
}

TEST(CostMemory, ExplicitShardCount) {
  HardwareProfile profile;
  profile.model_state_shards = 1;  // no sharding: the full 16 B/param
  const CostModel cost(test::dgx_h200(2), test::llama_7b(), profile);
  EXPECT_DOUBLE_EQ(cost.model_state_bytes_per_gpu(), kLlama7bParams * 16.0);
}

TEST(CostMemory, ActivationBytesPerTokenIs34HiddenPerLayer) {
  const CostModel cost(test::dgx_h200(2), test::llama_7b());
  EXPECT_DOUBLE_EQ(cost.activation_bytes_per_token(), 32.0 * 34 * 4096);  // 4.25 MiB
  ModelSpec fp32 = test::llama_7b();
  fp32.dtype = "fp32";
  fp32.dtype_bytes = 4;
  EXPECT_DOUBLE_EQ(CostModel(test::dgx_h200(2), fp32).activation_bytes_per_token(), 2 * 32.0 * 34 * 4096);
}

TEST(CostMemory, Llama7bCapacityOnTwoDgxH200) {
  const CostModel cost(test::dgx_h200(2), test::llama_7b());
  // (141 GiB · 0.9 − 32.006 GB) / 4,456,448 B = 104.25 GB / 4.25 MiB = 23,393 tokens.
  EXPECT_EQ(cost.token_capacity_per_gpu(), 23'393);
  // One node shards the optimizer over 8 instead of 16: fewer tokens fit.
  EXPECT_EQ(CostModel(test::dgx_h200(1), test::llama_7b()).token_capacity_per_gpu(), 22'259);
}

TEST(CostMemory, Llama7bCapacityOnA800) {
  const CostModel cost(test::a800_4nic(2), test::llama_7b());
  // (80 GiB · 0.9 − 32.006 GB) / 4,456,448 B = 45,303,201,792 / 4,456,448 = 10,165 tokens.
  EXPECT_EQ(cost.token_capacity_per_gpu(), 10'165);
}

TEST(CostMemory, CapacityIsZeroWhenModelStatesDoNotFit) {
  ClusterSpec small = test::dgx_h200(1);
  small.gpu.memory_bytes = 16 * test::kGiB;
  EXPECT_EQ(CostModel(small, test::llama_7b()).token_capacity_per_gpu(), 0);
}

TEST(CostMemory, ReserveFractionReducesCapacity) {
  HardwareProfile generous;
  generous.memory_reserve_fraction = 0.0;
  const CostModel base(test::dgx_h200(2), test::llama_7b());
  const CostModel more(test::dgx_h200(2), test::llama_7b(), generous);
  EXPECT_GT(more.token_capacity_per_gpu(), base.token_capacity_per_gpu());
}

}  // namespace
}  // namespace zb
