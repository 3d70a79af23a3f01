#pragma once
// How much of a batch lies in documents that one GPU cannot hold, and that one node cannot hold: the
// documents that force a context-parallel ring (or a head-parallel group) across GPUs, and across nodes.
// A property of the batch and the cluster, the same for every system, so the reports state it once per
// iteration at the scenario level. Definitions: docs/METRICS.md ("Long documents").
#include <cstdint>
#include <span>
#include <vector>

namespace zb {

// The shares of one batch in the documents strictly longer than a capacity, each in [0, 1] (0 for an
// empty batch): of the documents (count), of the tokens (Σ s) and of the attention work (Σ s²).
struct LongDocumentShares {
  double documents = 0;
  double tokens = 0;
  double attention_work = 0;
};

// Both thresholds for one batch.
struct BatchLongDocuments {
  int iteration = 0;
  LongDocumentShares above_gpu;
  LongDocumentShares above_node;
};

// The shares of `lengths` in documents longer than `capacity_tokens`.
[[nodiscard]] LongDocumentShares long_document_shares(std::span<const std::int64_t> lengths,
                                                      std::int64_t capacity_tokens);

// What a run keeps of every batch: the two capacities (tokens) and each iteration's shares. A run that
// recorded no capacity (a hand-built result) has gpu_capacity_tokens 0 and no iterations.
struct LongDocumentRecord {
  std::int64_t gpu_capacity_tokens = 0;   // CostModel::token_capacity_per_gpu (of a TP group's grid GPU)
  std::int64_t node_capacity_tokens = 0;  // a node's grid GPUs × gpu_capacity_tokens
  int tensor_parallel = 1;                // t: a grid GPU is a TP group of t GPUs when t > 1
  std::vector<BatchLongDocuments> iterations;

  // Adds one batch (in iteration order).
  void add(int iteration, std::span<const std::int64_t> lengths);
  [[nodiscard]] bool recorded() const { return !iterations.empty(); }
  // The mean over the recorded iterations of each share (zeros when none is recorded).
  [[nodiscard]] BatchLongDocuments mean() const;
};

}  // namespace zb
