// What a run keeps of its batches once it has dropped them: per iteration the figures report.json writes
// (documents, tokens, longest, the FNV-1a fingerprint compare pairs iterations by), and one histogram of
// every document's length in fixed half-octave bins.
#include "core/workload/batch_record.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace zb {
namespace {

Batch batch_of(int iteration, std::vector<std::int64_t> lengths) {
  Batch b;
  b.iteration = iteration;
  b.lengths = std::move(lengths);
  return b;
}

TEST(BatchRecord, KeepsEachIterationsFiguresInOrder) {
  BatchRecord record;
  record.add(batch_of(0, {512, 1024, 3}));
  record.add(batch_of(1, {}));
  ASSERT_EQ(record.batches.size(), 2u);
  const BatchSummary& first = record.batches[0];
  EXPECT_EQ(first.iteration, 0);
  EXPECT_EQ(first.documents, 3);
  EXPECT_EQ(first.tokens, 1539);
  EXPECT_EQ(first.longest, 1024);
  const BatchSummary& empty = record.batches[1];
  EXPECT_EQ(empty.iteration, 1);
  EXPECT_EQ(empty.documents, 0);
  EXPECT_EQ(empty.longest, 0);
}

// The values earlier reports wrote (FNV-1a 64 over 8 little-endian bytes per length): a report from before
// streaming still pairs with one from after.
TEST(BatchRecord, FingerprintsAreFnv1aOverLittleEndianLengths) {
  EXPECT_EQ(lengths_fnv1a({}), 0xcbf29ce484222325ULL);
  const std::vector<std::int64_t> one{1}, three{512, 1024, 3};
  EXPECT_EQ(lengths_fnv1a(one), 0x89cd31291d2aefa4ULL);
  EXPECT_EQ(lengths_fnv1a(three), 0xab441434c18c3080ULL);
  const std::vector<std::int64_t> reordered{3, 512, 1024};
  EXPECT_NE(lengths_fnv1a(reordered), lengths_fnv1a(three))
      << "the fingerprint is of the batch in draw order";
}

TEST(LengthHistogram, BinsAreHalfOctavesCountedFromLengthOne) {
  EXPECT_EQ(LengthHistogram::bin_of(1), 0);
  EXPECT_EQ(LengthHistogram::bin_of(2), 2);
  EXPECT_EQ(LengthHistogram::bin_of(3), 3);  // 2·log₂3 = 3.17
  EXPECT_EQ(LengthHistogram::bin_of(5), 4);  // 2·log₂5 = 4.64
  EXPECT_EQ(LengthHistogram::bin_of(4096), 24);
  EXPECT_EQ(LengthHistogram::bin_of(5792), 24);  // just under 2^12.5 = 5792.6...
  EXPECT_EQ(LengthHistogram::bin_of(5793), 25);
  EXPECT_EQ(LengthHistogram::bin_of(INT64_MAX), 126);  // 2^63 as a double: the last bin a length reaches
}

TEST(LengthHistogram, CountsEveryDocumentInFixedSpace) {
  LengthHistogram h;
  EXPECT_EQ(h.documents(), 0);
  for (int i = 0; i < 1'000'000; ++i) h.add(4096 + i % 2);
  h.add(3);
  h.add(0);  // not a document length: not counted
  h.add(-7);
  EXPECT_EQ(h.documents(), 1'000'001);
  EXPECT_EQ(h.shortest(), 3);
  EXPECT_EQ(h.longest(), 4097);
  EXPECT_DOUBLE_EQ(h.tokens(), 4096.5 * 1'000'000 + 3);
  EXPECT_DOUBLE_EQ(h.documents_in(24), 1'000'000);
  EXPECT_DOUBLE_EQ(h.tokens_in(24), 4096.5 * 1'000'000);
  EXPECT_DOUBLE_EQ(h.documents_in(3), 1);
  double documents = 0;
  for (int b = 0; b < LengthHistogram::kBins; ++b) documents += h.documents_in(b);
  EXPECT_DOUBLE_EQ(documents, 1'000'001);
}

}  // namespace
}  // namespace zb
