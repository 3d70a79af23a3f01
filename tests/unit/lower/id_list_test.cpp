// IdList, the small-buffer id list every Program instruction holds twice: whatever a lowering does to it
// (appends that cross the in-place capacity, copies, moves, reassignment, clearing and regrowing), it
// holds exactly what a std::vector would.
#include <random>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "core/lower/id_list.hpp"

namespace {

using zb::lower::IdList;

std::vector<int> contents(const IdList& list) {
  return {list.begin(), list.end()};
}

TEST(IdList, HoldsWhatAVectorHoldsThroughAnySequenceOfEdits) {
  for (unsigned seed = 1; seed <= 200; ++seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> op(0, 7), value(-5, 1000), count(0, 9);
    IdList list;
    std::vector<int> expected;
    for (int step = 0; step < 60; ++step) {
      switch (op(rng)) {
        case 0:
        case 1: {
          const int id = value(rng);
          list.push_back(id);
          expected.push_back(id);
          break;
        }
        case 2: {
          std::vector<int> more(static_cast<std::size_t>(count(rng)));
          for (int& id : more) id = value(rng);
          list.append(more.data(), more.data() + more.size());
          expected.insert(expected.end(), more.begin(), more.end());
          break;
        }
        case 3: {  // copy, then keep editing the copy
          IdList copy(list);
          list = IdList{};
          list = copy;
          break;
        }
        case 4: {  // move out and back: the source is left empty and reusable
          IdList moved(std::move(list));
          ASSERT_TRUE(list.empty()) << "seed " << seed;  // NOLINT(bugprone-use-after-move)
          list.push_back(7);
          list = std::move(moved);
          break;
        }
        case 5: {
          std::vector<int> fresh(static_cast<std::size_t>(count(rng)));
          for (int& id : fresh) id = value(rng);
          list = fresh;
          expected = fresh;
          break;
        }
        case 6:
          list.clear();
          expected.clear();
          break;
        default: {
          const IdList& same = list;
          list = same;  // self-assignment keeps everything
          break;
        }
      }
      ASSERT_EQ(contents(list), expected) << "seed " << seed << " step " << step;
      ASSERT_EQ(list.size(), expected.size());
      for (std::size_t i = 0; i < expected.size(); ++i) ASSERT_EQ(list[i], expected[i]);
    }
  }
}

TEST(IdList, IsSmallEnoughForTwoPerInstruction) {
  // Four ids in place plus size and capacity, sharing the bytes of the heap pointer.
  EXPECT_LE(sizeof(IdList), 24u);
}

}  // namespace
