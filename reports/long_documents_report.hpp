#pragma once
// The long-document shares of a run's batches (core/metrics/long_documents.hpp) as the reports show them:
// one line for the console and the HTML header, and the workload section's keys in report.json.
// Definitions: docs/METRICS.md ("Long documents").
#include <string>

#include <nlohmann/json.hpp>

#include "core/metrics/long_documents.hpp"

namespace zb::reports {

// "long documents (mean of 10 batches): > GPU capacity (23.4 k tokens) 2.0 % of documents, 31.0 % of
// tokens, 78.2 % of Σs²; > node capacity (187 k tokens) 0.0 %, 0.0 %, 0.0 %". Empty when not recorded.
[[nodiscard]] std::string long_documents_statement(const LongDocumentRecord& record);

// {"documents", "tokens", "attention_work"}: the three shares.
[[nodiscard]] nlohmann::ordered_json long_document_shares_json(const LongDocumentShares& shares);

// {"gpu": shares, "node": shares} of one batch.
[[nodiscard]] nlohmann::ordered_json batch_long_documents_json(const BatchLongDocuments& batch);

// The recorded iteration's entry, or null when the run recorded none for it.
[[nodiscard]] nlohmann::ordered_json iteration_long_documents_json(const LongDocumentRecord& record,
                                                                   int iteration);

// {"gpu", "node"} in tokens and "tensor_parallel" (t: under TP, "gpu" is one TP group's), or null when
// not recorded.
[[nodiscard]] nlohmann::ordered_json capacity_tokens_json(const LongDocumentRecord& record);

// The mean over the batches ({"gpu": shares, "node": shares}), or null when not recorded.
[[nodiscard]] nlohmann::ordered_json mean_long_documents_json(const LongDocumentRecord& record);

}  // namespace zb::reports
