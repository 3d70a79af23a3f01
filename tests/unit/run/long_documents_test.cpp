// A run records, for every batch it draws, the shares in documents longer than one GPU's and one node's
// token capacity (core/metrics/long_documents.hpp), against the capacities of the scenario's own cost
// model: under tensor parallelism, those of the grid of TP groups that strategies plan on.
#include <gtest/gtest.h>

#include <string>

#include "core/config/scenario_loader.hpp"
#include "core/cost/cost_model.hpp"
#include "core/run/run_scenario.hpp"
#include "core/strategies/tensor_parallel.hpp"
#include "core/workload/workload.hpp"

namespace zb {
namespace {

Scenario long_context_scenario(int tensor) {
  return parse_scenario(R"({"name": "long", "cluster": {"preset": "dgx-h200", "nodes": 1},
                            "model": {"preset": "llama-7b"}, "parallelism": {"tensor": )" +
                            std::to_string(tensor) + R"(},
                            "workload": {"dataset": "prolong64k", "max_seq_len": 65536,
                                         "tokens_per_iteration": 262144, "iterations": 3},
                            "systems": ["ring-cp"]})",
                        "long.json");
}

TEST(RunLongDocuments, EveryBatchAgainstTheScenariosCapacities) {
  for (const int tensor : {1, 2}) {
    SCOPED_TRACE("tensor " + std::to_string(tensor));
    const Scenario s = long_context_scenario(tensor);
    const CostModel cost(s.cluster, s.model, s.hardware_profile.profile);
    const RunResult run = run_scenario(s);
    const std::int64_t gpu = tensor_parallel_token_capacity(cost, tensor);
    if (tensor == 1) {
      EXPECT_EQ(gpu, cost.token_capacity_per_gpu());
    }
    EXPECT_EQ(run.long_documents.gpu_capacity_tokens, gpu);
    EXPECT_EQ(run.long_documents.node_capacity_tokens, gpu * (8 / tensor));
    EXPECT_EQ(run.long_documents.tensor_parallel, tensor);
    const Workload workload(s);
    ASSERT_EQ(run.long_documents.iterations.size(), 3U);
    bool any_above_gpu = false;
    for (int i = 0; i < 3; ++i) {
      const BatchLongDocuments& got = run.long_documents.iterations[static_cast<std::size_t>(i)];
      const Batch batch = workload.batch(i);
      EXPECT_EQ(got.iteration, i);
      const LongDocumentShares gpu_shares = long_document_shares(batch.lengths, gpu);
      EXPECT_EQ(got.above_gpu.attention_work, gpu_shares.attention_work);
      EXPECT_EQ(got.above_node.tokens, long_document_shares(batch.lengths, gpu * (8 / tensor)).tokens);
      any_above_gpu = any_above_gpu || gpu_shares.documents > 0;
    }
    // 64K-token documents of prolong64k do not fit one GPU of llama-7b (about 23 k tokens).
    if (tensor == 1) {
      EXPECT_TRUE(any_above_gpu);
    }
  }
}

}  // namespace
}  // namespace zb
