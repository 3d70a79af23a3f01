#include "reports/long_documents_report.hpp"

#include <fmt/format.h>

#include "reports/number_format.hpp"

namespace zb::reports {

using ojson = nlohmann::ordered_json;

std::string long_documents_statement(const LongDocumentRecord& record) {
  if (!record.recorded()) return "";
  const BatchLongDocuments mean = record.mean();
  const std::size_t n = record.iterations.size();
  // Under tensor parallelism the unit that holds a micro-batch is a TP group.
  const std::string unit =
      record.tensor_parallel > 1 ? fmt::format(" per TP group of {}", record.tensor_parallel) : "";
  return fmt::format(
      "long documents (mean of {} batch{}): > GPU capacity ({} tokens{}) {} of documents, {} of tokens, {} "
      "of "
      "\u03a3s\u00b2; > node capacity ({} tokens) {}, {}, {}",
      n, n == 1 ? "" : "es", format_si(static_cast<double>(record.gpu_capacity_tokens)), unit,
      format_percent(mean.above_gpu.documents), format_percent(mean.above_gpu.tokens),
      format_percent(mean.above_gpu.attention_work),
      format_si(static_cast<double>(record.node_capacity_tokens)), format_percent(mean.above_node.documents),
      format_percent(mean.above_node.tokens), format_percent(mean.above_node.attention_work));
}

ojson long_document_shares_json(const LongDocumentShares& shares) {
  return ojson{
      {"documents", shares.documents}, {"tokens", shares.tokens}, {"attention_work", shares.attention_work}};
}

ojson batch_long_documents_json(const BatchLongDocuments& batch) {
  return ojson{{"gpu", long_document_shares_json(batch.above_gpu)},
               {"node", long_document_shares_json(batch.above_node)}};
}

ojson iteration_long_documents_json(const LongDocumentRecord& record, int iteration) {
  for (const BatchLongDocuments& batch : record.iterations) {
    if (batch.iteration == iteration) return batch_long_documents_json(batch);
  }
  return ojson();
}

ojson capacity_tokens_json(const LongDocumentRecord& record) {
  if (!record.recorded()) return ojson();
  return ojson{{"gpu", record.gpu_capacity_tokens},
               {"node", record.node_capacity_tokens},
               {"tensor_parallel", record.tensor_parallel}};
}

ojson mean_long_documents_json(const LongDocumentRecord& record) {
  if (!record.recorded()) return ojson();
  return batch_long_documents_json(record.mean());
}

}  // namespace zb::reports
