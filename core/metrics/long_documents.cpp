#include "core/metrics/long_documents.hpp"

namespace zb {

LongDocumentShares long_document_shares(std::span<const std::int64_t> lengths, std::int64_t capacity_tokens) {
  // Sums in document order, in doubles: s² of a million-token document is 10¹², exact in a double, and
  // the order fixes the rounding of the totals, so the same batch always gives the same shares.
  double documents = 0, tokens = 0, work = 0;
  double long_documents = 0, long_tokens = 0, long_work = 0;
  for (const std::int64_t length : lengths) {
    const auto s = static_cast<double>(length);
    documents += 1;
    tokens += s;
    work += s * s;
    if (length > capacity_tokens) {
      long_documents += 1;
      long_tokens += s;
      long_work += s * s;
    }
  }
  LongDocumentShares out;
  if (documents > 0) out.documents = long_documents / documents;
  if (tokens > 0) out.tokens = long_tokens / tokens;
  if (work > 0) out.attention_work = long_work / work;
  return out;
}

void LongDocumentRecord::add(int iteration, std::span<const std::int64_t> lengths) {
  iterations.push_back({iteration, long_document_shares(lengths, gpu_capacity_tokens),
                        long_document_shares(lengths, node_capacity_tokens)});
}

BatchLongDocuments LongDocumentRecord::mean() const {
  BatchLongDocuments out;
  if (iterations.empty()) return out;
  const auto n = static_cast<double>(iterations.size());
  for (const BatchLongDocuments& it : iterations) {
    for (auto [into, from] :
         {std::pair{&out.above_gpu, &it.above_gpu}, std::pair{&out.above_node, &it.above_node}}) {
      into->documents += from->documents / n;
      into->tokens += from->tokens / n;
      into->attention_work += from->attention_work / n;
    }
  }
  return out;
}

}  // namespace zb
