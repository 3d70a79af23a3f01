// The console summary fits the terminal (issue 37, item 2): at most 100 columns by default, clean at 60,
// every column with --wide; the prose wraps at spaces and the table leaves out its least important
// columns, naming them.
#include <gtest/gtest.h>

#include <random>
#include <sstream>

#include "reports/console.hpp"
#include "reports/text_table.hpp"
#include "reports/text_wrap.hpp"
#include "tests/unit/reports/sample_run.hpp"

namespace zb::reports {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::size_t widest_line(const std::string& text) {
  std::size_t widest = 0;
  for (const std::string& line : lines_of(text)) widest = std::max(widest, display_width(line));
  return widest;
}

std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

// The sample run with five more baselines under long labels, as a scenario comparing every system does:
// the full table is over 150 columns wide.
RunResult crowded_run() {
  RunResult run = test::sample_run();
  run.systems[2] = test::feasible_system(
      SystemSpec{"uniform-cp", "uniform-cp", nlohmann::json{{"degree", 8}}}, {1.2, 1.3, 1.25}, 0.3);
  for (int i = 0; i < 5; ++i) {
    const std::string label = "ring-cp[degree=" + std::to_string(2 << i) + ",dealing=balanced]";
    run.systems.push_back(test::feasible_system(
        SystemSpec{label, "ring-cp", nlohmann::json{{"degree", 2 << i}}}, {1.4 + 0.1 * i, 1.5, 1.45}, 0.2));
  }
  return run;
}

std::string table_header(const std::string& console) {
  for (const std::string& line : lines_of(console))
    if (line.rfind("system ", 0) == 0) return line;
  return "";
}

TEST(ConsoleWidth, TheDefaultSummaryFitsOneHundredColumns) {
  const RunSummary summary = summarize_run(crowded_run());
  ASSERT_GT(widest_line(console_summary(summary, ConsoleLayout::full())), 150U);  // the case worth testing
  const std::string text = console_summary(summary, ConsoleLayout{});
  EXPECT_LE(widest_line(text), 100U) << text;
  // What matters most stays: the system, its time, the speed-up against the best baseline, the MFU.
  const std::string header = table_header(text);
  for (const char* title : {"iteration time", "vs best", "MFU"})
    EXPECT_NE(header.find(title), std::string::npos) << title << " missing from: " << header;
  // And the summary says what it left out, and where to find it.
  EXPECT_NE(text.find("not shown at 100 columns: "), std::string::npos) << text;
  EXPECT_NE(text.find("TFLOP/s/GPU"), std::string::npos);
  EXPECT_NE(text.find("--wide"), std::string::npos);
}

TEST(ConsoleWidth, SixtyColumnsKeepTheFirstFourColumnsAndWrapEverySentence) {
  const RunSummary summary = summarize_run(crowded_run());
  const std::string text = console_summary(summary, ConsoleLayout{60, false});
  for (const std::string& line : lines_of(text)) {
    // A line may pass the width only as one unbreakable word (a label, a path) after its indent.
    if (display_width(line) > 60) {
      EXPECT_EQ(words_of(line).size(), 1U) << line;
    }
  }
  const std::string header = table_header(text);
  EXPECT_NE(header.find("iteration time"), std::string::npos) << header;
  EXPECT_NE(header.find("vs best"), std::string::npos) << header;
  // Nothing of the content is lost to the wrapping: the same words in the same order as unwrapped,
  // table aside.
  EXPECT_NE(text.find("gates:"), std::string::npos);
  EXPECT_NE(text.find("FAILED (exit 1)"), std::string::npos);
}

TEST(ConsoleWidth, WideKeepsEveryColumnOnOneLineEach) {
  const RunSummary summary = summarize_run(crowded_run());
  const std::string text = console_summary(summary, ConsoleLayout::full());
  const std::string header = table_header(text);
  for (const std::string& title :
       {std::string("TFLOP/s/GPU"), std::string("tokens/s"), std::string("vs best (uniform-cp)"),
        std::string("NIC util mean/max"), std::string("NVLink util mean/max"), std::string("planner")})
    EXPECT_NE(header.find(title), std::string::npos) << title;
  for (const SystemSummary& s : summary.systems)
    if (s.is_baseline) {
      EXPECT_NE(header.find("vs " + s.label), std::string::npos) << s.label;
    }
  EXPECT_EQ(text.find("not shown at"), std::string::npos);
}

TEST(ConsoleWidth, ColumnsThatFitAreKept) {
  // The small sample fits 200 columns whole: nothing is left out and nothing is said about it.
  const std::string text = console_summary(summarize_run(test::sample_run()), ConsoleLayout{200, false});
  EXPECT_EQ(text.find("not shown at"), std::string::npos) << text;
  EXPECT_NE(table_header(text).find("vs ring-cp"), std::string::npos);
}

TEST(WrapText, BreaksAtSpacesWithAHangingIndent) {
  EXPECT_EQ(wrap_text("  one two three four\n", 10), "  one two\n    three\n    four\n");
  EXPECT_EQ(wrap_text("short\n\nlines stay\n", 10), "short\n\nlines stay\n");
  EXPECT_EQ(wrap_text("a /a/very/long/path b", 8), "a\n  /a/very/long/path\n  b");
  EXPECT_EQ(wrap_text("PASS  speedup of zeppelin", 14), "PASS  speedup\n  of zeppelin");  // gaps kept
  EXPECT_EQ(wrap_text("took 106 ms, of 2 s", 10), "took\n  106 ms,\n  of 2 s");  // a number keeps its unit
  EXPECT_EQ(wrap_text("\u00d7\u00d7\u00d7 \u00b5s", 6),
            "\u00d7\u00d7\u00d7 \u00b5s");  // code points, not bytes
}

TEST(WrapText, KeepsEveryWordInOrderAndFitsWhereWordsAllow) {
  std::mt19937 random(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::string text;
    const int words = 1 + static_cast<int>(random() % 40);
    for (int w = 0; w < words; ++w) {
      text += std::string(1 + random() % 14, static_cast<char>('a' + random() % 26));
      text += random() % 9 == 0 ? "\n" : " ";
    }
    const std::size_t width = 8 + random() % 60;
    const std::string wrapped = wrap_text(text, width);
    EXPECT_EQ(words_of(wrapped), words_of(text)) << text;
    for (const std::string& line : lines_of(wrapped))
      if (display_width(line) > width) {
        EXPECT_EQ(words_of(line).size(), 1U) << width << ": " << line;
      }
  }
}

}  // namespace
}  // namespace zb::reports
