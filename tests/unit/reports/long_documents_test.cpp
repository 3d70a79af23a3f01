// The shares of each batch in documents longer than one GPU's and one node's token capacity (issue 31,
// item 5): the formulas on a hand-computed batch, and every report stating them once per iteration at the
// scenario level (report.json, report.html, one console line, a combined-table column).
#include <gtest/gtest.h>

#include <vector>

#include "core/metrics/long_documents.hpp"
#include "reports/combined_table.hpp"
#include "reports/console.hpp"
#include "reports/html_report.hpp"
#include "reports/json_report.hpp"
#include "tests/unit/reports/sample_run.hpp"

namespace zb {
namespace {

// Four documents, 20 000 tokens, Σs² = 1 + 9 + 36 + 100 = 146 (× 10⁶).
const std::vector<std::int64_t> batch{1000, 3000, 6000, 10000};

TEST(LongDocuments, SharesOfAHandComputedBatch) {
  // Above 2500 tokens: 3000, 6000 and 10000.
  const LongDocumentShares gpu = long_document_shares(batch, 2500);
  EXPECT_DOUBLE_EQ(gpu.documents, 3.0 / 4);
  EXPECT_DOUBLE_EQ(gpu.tokens, 19000.0 / 20000);
  EXPECT_DOUBLE_EQ(gpu.attention_work, 145e6 / 146e6);
  // Above 8000 tokens: 10000 alone, a quarter of the documents, half the tokens, 100/146 of Σs².
  const LongDocumentShares node = long_document_shares(batch, 8000);
  EXPECT_DOUBLE_EQ(node.documents, 0.25);
  EXPECT_DOUBLE_EQ(node.tokens, 0.5);
  EXPECT_DOUBLE_EQ(node.attention_work, 100.0 / 146);
  // Strictly longer: a document of exactly the capacity fits.
  const LongDocumentShares exact = long_document_shares(batch, 10000);
  EXPECT_EQ(exact.documents, 0.0);
  EXPECT_EQ(exact.attention_work, 0.0);
  // No document, no share (not a division by zero).
  EXPECT_EQ(long_document_shares({}, 1).tokens, 0.0);
}

TEST(LongDocuments, TheRunsFigureIsTheMeanOverItsBatches) {
  LongDocumentRecord record;
  record.gpu_capacity_tokens = 2500;
  record.node_capacity_tokens = 8000;
  EXPECT_FALSE(record.recorded());
  record.add(0, batch);
  record.add(1, std::vector<std::int64_t>{100, 200});  // nothing above either capacity
  ASSERT_TRUE(record.recorded());
  const BatchLongDocuments mean = record.mean();
  EXPECT_DOUBLE_EQ(mean.above_gpu.documents, 3.0 / 8);
  EXPECT_DOUBLE_EQ(mean.above_gpu.tokens, 0.95 / 2);
  EXPECT_DOUBLE_EQ(mean.above_node.attention_work, 100.0 / 146 / 2);
  EXPECT_EQ(record.iterations[1].above_gpu.documents, 0.0);
}

}  // namespace

namespace reports {
namespace {

TEST(LongDocumentsReport, EveryReportStatesThemAtTheScenarioLevel) {
  const RunResult run = test::sample_run();
  const RunSummary summary = summarize_run(run);
  const BatchLongDocuments& first = run.long_documents.iterations.at(0);
  ASSERT_GT(first.above_gpu.documents, 0.0);  // the sample has documents above its GPU capacity
  const nlohmann::ordered_json report = report_json(run, summary, test::fixed_context());
  const auto& workload = report["workload"];
  EXPECT_EQ(workload["capacity_tokens"]["gpu"], 8000);
  EXPECT_EQ(workload["capacity_tokens"]["node"], 32000);
  EXPECT_DOUBLE_EQ(workload["batches"][0]["above_capacity"]["gpu"]["attention_work"].get<double>(),
                   first.above_gpu.attention_work);
  EXPECT_DOUBLE_EQ(workload["above_capacity_mean"]["gpu"]["tokens"].get<double>(),
                   run.long_documents.mean().above_gpu.tokens);
  EXPECT_EQ(workload["above_capacity_mean"]["node"]["documents"], 0.0);

  const std::string console = console_summary(summary, ConsoleLayout::full());
  const std::string line = "long documents (mean of 3 batches): > GPU capacity (8.00 k tokens) ";
  EXPECT_NE(console.find(line), std::string::npos) << console;
  EXPECT_NE(console.find("; > node capacity (32.0 k tokens) 0.0 %, 0.0 %, 0.0 %\n"), std::string::npos)
      << console;

  const std::string html = html_report(run, summary, test::fixed_context());
  EXPECT_NE(html.find("<h2>Iterations</h2>"), std::string::npos);
  EXPECT_NE(html.find("&gt; GPU: &#931;s&#178;"), std::string::npos);
  EXPECT_NE(html.find("Capacities: one GPU 8000 tokens, one node 32000 tokens."), std::string::npos);

  const CombinedTable t = combine("lib", {combined_row(summary, "s.json", "out/s")});
  const std::string markdown = combined_markdown(t);
  EXPECT_NE(markdown.find("| \u03a3s\u00b2 > GPU / node |"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find(" / 0.0 % |"), std::string::npos) << markdown;
  const nlohmann::ordered_json j = combined_json(t);
  EXPECT_EQ(j["rows"][0]["long_documents"]["capacity_tokens"]["gpu"], 8000);
}

TEST(LongDocumentsReport, AResultWithoutTheRecordShowsNone) {
  RunResult run = test::sample_run();
  run.long_documents = LongDocumentRecord{};
  const RunSummary summary = summarize_run(run);
  EXPECT_EQ(console_summary(summary, ConsoleLayout::full()).find("long documents"), std::string::npos);
  const nlohmann::ordered_json report = report_json(run, summary, test::fixed_context());
  EXPECT_TRUE(report["workload"]["capacity_tokens"].is_null());
  EXPECT_TRUE(report["workload"]["batches"][0]["above_capacity"].is_null());
  const CombinedTable t = combine("lib", {combined_row(summary, "s.json", "out/s")});
  EXPECT_EQ(combined_markdown(t).find("GPU / node"), std::string::npos);
  EXPECT_TRUE(combined_json(t)["rows"][0]["long_documents"].is_null());
}

}  // namespace
}  // namespace reports
}  // namespace zb
