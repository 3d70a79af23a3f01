// How the cuDNN SDPA plan cuts attention blocks into cuDNN entries (kernels/sdpa_blocks.hpp): the named
// cases, a property test that the entries' cuDNN masks see exactly the keys the absolute-position mask
// sees, the refusals, and the backward's gather map. Pure host code: runs on every machine.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/sdpa_blocks.hpp"

namespace zb::kernels {
namespace {

constexpr AttentionMask kCausal = AttentionMask::causal;
constexpr AttentionMask kFull = AttentionMask::full;

// q_row 10, kv_row 20, out_row 30, so a test can tell the three row spaces apart.
AttentionBlockDesc block(std::int64_t q_count, std::int64_t kv_count, std::int64_t q_position,
                         std::int64_t kv_position, AttentionMask mask = kCausal) {
  return {10, q_count, 20, kv_count, q_position, kv_position, mask, 30};
}

std::string kinds(const std::vector<SdpaEntry>& entries) {
  std::string text;
  for (const SdpaEntry& e : entries) {
    text += e.kind == SdpaEntryKind::empty ? "E" : e.kind == SdpaEntryKind::full ? "F" : "B";
    text += std::to_string(e.q_count) + "/" + std::to_string(e.kv_count) + " ";
  }
  return text;
}

TEST(SdpaBlocks, ClassifiesTheHeaderKinds) {
  // Keys end where the queries end: one bottom-right entry (a late query chunk against earlier keys).
  EXPECT_EQ(kinds(split_sdpa_block(block(10, 110, 100, 0), 0)), "B10/110 ");
  // All keys precede the queries: full. All keys follow them: empty (no cuDNN launch).
  EXPECT_EQ(kinds(split_sdpa_block(block(10, 50, 100, 0), 0)), "F10/50 ");
  EXPECT_EQ(kinds(split_sdpa_block(block(10, 5, 0, 20), 0)), "E10/0 ");
  // A full-mask block is full whatever the positions; no keys is empty; no queries is nothing.
  EXPECT_EQ(kinds(split_sdpa_block(block(10, 5, 0, 20, kFull), 0)), "F10/5 ");
  EXPECT_EQ(kinds(split_sdpa_block(block(10, 0, 0, 0), 0)), "E10/0 ");
  EXPECT_TRUE(split_sdpa_block(block(0, 5, 0, 0), 0).empty());
  // The last key at the first query's position: bottom-right of one row, then full rows; one row earlier
  // and every row sees every key.
  EXPECT_EQ(kinds(split_sdpa_block(block(4, 3, 2, 0), 0)), "B1/3 F3/3 ");
  EXPECT_EQ(kinds(split_sdpa_block(block(4, 3, 3, 0), 0)), "F4/3 ");
}

TEST(SdpaBlocks, SplitsOtherCausalBlocksByRows) {
  // Keys [0, 5) for queries [0, 10) (top-left): rows 0..4 bottom-right over 5 keys, rows 5..9 full.
  const auto top_left = split_sdpa_block(block(10, 5, 0, 0), 3);
  ASSERT_EQ(kinds(top_left), "B5/5 F5/5 ");
  EXPECT_EQ(top_left[1].q_row, 15);
  EXPECT_EQ(top_left[1].out_row, 35);
  EXPECT_EQ(top_left[1].kv_row, 20);
  EXPECT_EQ(top_left[1].block, 3);
  // Keys [4, 10) for queries [0, 10): rows 0..3 see nothing, rows 4..9 are a square bottom-right.
  const auto late_keys = split_sdpa_block(block(10, 6, 0, 4), 0);
  ASSERT_EQ(kinds(late_keys), "E4/0 B6/6 ");
  EXPECT_EQ(late_keys[1].q_row, 14);
  // All three: keys [3, 6) for queries [0, 10).
  EXPECT_EQ(kinds(split_sdpa_block(block(10, 3, 0, 3), 0)), "E3/0 B3/3 F4/3 ");
}

// Does query row i of the block see key j, by cuDNN's rule for the entry holding row i?
bool entry_sees(const std::vector<SdpaEntry>& entries, const AttentionBlockDesc& b, std::int64_t i,
                std::int64_t j, int& holders) {
  bool sees = false;
  holders = 0;
  for (const SdpaEntry& e : entries) {
    const std::int64_t a = b.q_row + i - e.q_row;  // row inside the entry
    if (a < 0 || a >= e.q_count) continue;
    ++holders;
    EXPECT_EQ(e.out_row - b.out_row, e.q_row - b.q_row) << "out rows follow q rows";
    EXPECT_EQ(e.kv_row, b.kv_row) << "every entry's keys start at the block's first key";
    if (e.kind == SdpaEntryKind::empty) continue;
    if (e.kind == SdpaEntryKind::bottom_right_causal) {
      EXPECT_LE(e.q_count, e.kv_count) << "bottom-right entries never have more queries than keys";
    }
    const std::int64_t k = j;  // key inside the entry (same first key)
    if (k >= e.kv_count) continue;
    sees = e.kind == SdpaEntryKind::full || k <= a + (e.kv_count - e.q_count);
  }
  return sees;
}

TEST(SdpaBlocks, EntriesSeeExactlyTheAbsolutePositionMask) {
  std::mt19937_64 rng(12345);
  const auto draw = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  for (int trial = 0; trial < 400; ++trial) {
    const AttentionBlockDesc b{draw(0, 5),
                               draw(0, 40),
                               draw(0, 5),
                               draw(0, 40),
                               draw(0, 60),
                               draw(0, 60),
                               draw(0, 4) == 0 ? kFull : kCausal,
                               draw(0, 5)};
    const auto entries = split_sdpa_block(b, trial);
    for (std::int64_t i = 0; i < b.q_count; ++i) {
      for (std::int64_t j = 0; j < b.kv_count; ++j) {
        int holders = 0;
        const bool expected = b.mask == kFull || b.kv_position + j <= b.q_position + i;
        ASSERT_EQ(entry_sees(entries, b, i, j, holders), expected)
            << "trial " << trial << " row " << i << " key " << j << ": " << kinds(entries);
        ASSERT_EQ(holders, 1) << "each row in exactly one entry, trial " << trial;
      }
    }
  }
}

TEST(SdpaBlocks, RefusesWhatCudnnCannotAddressNamingTheBlock) {
  std::vector<SdpaEntry> out;
  const std::vector<AttentionBlockDesc> one{{0, 10, 0, 10, 0, 0, kCausal, 0}};
  const Status d60 = split_sdpa_blocks("SdpaPlan::build", {4, 4, 60, 10, 10, 10}, one, false, out);
  EXPECT_NE(d60.message().find("head_dim = 60"), std::string::npos) << d60.message();
  const Status d264 = split_sdpa_blocks("SdpaPlan::build", {4, 4, 264, 10, 10, 10}, one, false, out);
  EXPECT_NE(d264.message().find("head_dim = 264"), std::string::npos) << d264.message();
  // 2^20 rows × 32 heads × 128 = 2^32 elements: the second block's rows end past int32 offsets.
  const AttentionShape big{32, 8, 128, 1 << 20, 1 << 20, 1 << 20};
  const std::vector<AttentionBlockDesc> far{{0, 10, 0, 10, 0, 0, kCausal, 0},
                                            {600000, 10, 0, 10, 600000, 0, kCausal, 10}};
  const Status offsets = split_sdpa_blocks("SdpaPlan::build", big, far, false, out);
  EXPECT_NE(offsets.message().find("blocks[1]: query rows end at 600010"), std::string::npos)
      << offsets.message();
  // The validators' errors come through with their names; the backward allows shared output rows.
  const std::vector<AttentionBlockDesc> outside{{5, 10, 0, 10, 0, 0, kCausal, 0}};
  EXPECT_NE(split_sdpa_blocks("SdpaPlan::build", {4, 4, 64, 10, 10, 10}, outside, false, out)
                .message()
                .find("blocks[0].q rows"),
            std::string::npos);
  const std::vector<AttentionBlockDesc> shared{{0, 10, 0, 5, 0, 0, kCausal, 0},
                                               {0, 10, 5, 5, 0, 5, kCausal, 0}};
  EXPECT_FALSE(split_sdpa_blocks("SdpaPlan::build", {4, 4, 64, 10, 10, 10}, shared, false, out).ok());
  ASSERT_TRUE(split_sdpa_blocks("SdpaPlan::build", {4, 4, 64, 10, 10, 10}, shared, true, out).ok());
  EXPECT_EQ(kinds(out), "B5/5 F5/5 E5/0 B5/5 ");
}

TEST(SdpaBlocks, GatherMapSumsEveryDestinationInListOrder) {
  // Three entries: rows [0, 4) at scratch 0, rows [2, 5) at scratch 4, rows [0, 2) at scratch 7.
  const std::vector<std::int64_t> dest{0, 2, 0}, count{4, 3, 2}, scratch{0, 4, 7};
  const SdpaGatherMap map = build_gather_map(dest, count, scratch);
  EXPECT_EQ(map.dest_rows, (std::vector<std::int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(map.first, (std::vector<std::int64_t>{0, 2, 4, 6, 8, 9}));
  EXPECT_EQ(map.sources, (std::vector<std::int64_t>{0, 7, 1, 8, 2, 4, 3, 5, 6}));
  // Applying it equals adding each entry's scratch rows in turn.
  std::vector<double> sequential(5, 1.0), gathered(5, 1.0), rows(9);
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<double>(1 << i);
  for (std::size_t e = 0; e < dest.size(); ++e)
    for (std::int64_t r = 0; r < count[e]; ++r)
      sequential[static_cast<std::size_t>(dest[e] + r)] += rows[static_cast<std::size_t>(scratch[e] + r)];
  for (std::size_t d = 0; d < map.dest_rows.size(); ++d)
    for (auto s = map.first[d]; s < map.first[d + 1]; ++s)
      gathered[static_cast<std::size_t>(map.dest_rows[d])] += rows[static_cast<std::size_t>(map.sources[s])];
  EXPECT_EQ(gathered, sequential);
  EXPECT_TRUE(build_gather_map({}, {}, {}).dest_rows.empty());
}

}  // namespace
}  // namespace zb::kernels
