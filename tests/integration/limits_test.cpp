// The reference backend's size limits and the sparse row store that keeps its memory to the rows a
// rank holds. A batch too large for CPU numerics must be refused before any row is generated, as bad
// input (exit 2) that names the scenario and the figure, instead of running out of memory or for hours.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/exec/reference/row_store.hpp"
#include "tests/integration/reference_support.hpp"

namespace zb {
namespace {

// Runs `lengths` with ring CP on 4 GPUs and returns the error the executor throws (none expected to pass).
Error refusal(const std::vector<std::int64_t>& lengths, const reference::ReferenceOptions& options) {
  Scenario s = test::small_cluster(1, 4, false, 5);
  s.name = "too-big";
  try {
    (void)test::run_reference(s, test::system("ring-cp"), lengths, options);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "the batch was not refused";
  return Error(ExitCode::ok, Location{}, "");
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(ReferenceLimits, TooManyTokensIsBadInputNamingScenarioAndFigures) {
  // 2^20 tokens, the quickstart's batch: it ran out of memory before the limit existed.
  const std::vector<std::int64_t> lengths(16, 65536);
  const Error e = refusal(lengths, reference::ReferenceOptions{});
  EXPECT_EQ(e.code(), ExitCode::bad_input);
  const std::string text = e.what();
  EXPECT_TRUE(contains(text, "scenario 'too-big' has 1048576 tokens per iteration")) << text;
  EXPECT_TRUE(contains(text, "limit of " + std::to_string(reference::ReferenceOptions::kDefaultMaxTokens)))
      << text;
  EXPECT_TRUE(contains(text, "--backend sim")) << text;
}

TEST(ReferenceLimits, LongSequencesAreBadInputThroughTheSumOfSquares) {
  // Few tokens but long sequences: the float64 check is quadratic per sequence, so Σ length² is bounded too.
  reference::ReferenceOptions options;
  options.max_sum_squares = 5e4;
  const Error e = refusal({300, 41}, options);  // Σ length² = 91681
  EXPECT_EQ(e.code(), ExitCode::bad_input);
  EXPECT_TRUE(contains(e.what(), "sum of squared lengths is 9.17e+04, above its limit of 5e+04")) << e.what();
}

TEST(ReferenceLimits, DefaultsAcceptTheIntegrationBatches) {
  reference::ReferenceOptions options;
  options.transport = reference::TransportChoice::in_process;
  const auto run = test::run_reference(test::small_cluster(1, 4, false, 5), test::system("ring-cp"),
                                       {4096, 517, 3}, options);
  EXPECT_TRUE(contains(run.trace.model_note, "verified")) << run.trace.model_note;
}

TEST(ReferenceRowStore, HoldsOnlyTheRangesItWasGiven) {
  reference::RowStore store(2);
  const std::vector<float> a{1, 2, 3, 4}, b{5, 6, 7, 8};
  store.put(0, 60000, 60002, a);  // a short range of a long sequence: two rows stored, not 60002
  EXPECT_EQ(store.stored_rows(), 2);
  store.put(0, 60002, 60004, b);  // touching ranges merge, so the four rows are one span
  const auto rows = store.rows(0, 60001, 60003);
  EXPECT_EQ(std::vector<float>(rows.begin(), rows.end()), (std::vector<float>{3, 4, 5, 6}));
  EXPECT_EQ(store.first_missing(0, 59999, 60004), 59999);
  EXPECT_EQ(store.present_run(0, 60000, 70000), 4);
  store.erase(0, 60001, 60003);  // the middle leaves: its storage goes, both ends stay
  EXPECT_EQ(store.stored_rows(), 2);
  EXPECT_EQ(store.first_missing(0, 60000, 60004), 60001);
  EXPECT_TRUE(store.has(0, 60003, 60004));
  EXPECT_EQ(store.rows(0, 60003, 60004)[1], 8);
}

TEST(ReferenceRowStore, AccumulatorsKeepTheirFillUntilMerged) {
  reference::RowStore lse(1);
  lse.allocate(3, 10, 12, -1.0F);
  lse.allocate(3, 12, 14, -1.0F);  // touching: one span, nothing present yet
  EXPECT_EQ(lse.first_missing(3, 10, 14), 10);
  lse.rows(3, 11, 13)[0] = 0.5F;
  lse.mark_present(3, 10, 14);
  const auto rows = lse.rows(3, 10, 14);
  EXPECT_EQ(std::vector<float>(rows.begin(), rows.end()), (std::vector<float>{-1, 0.5F, -1, -1}));
}

}  // namespace
}  // namespace zb
