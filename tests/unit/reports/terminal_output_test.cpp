// What reaches the terminal (issue 17, item 6): user-supplied strings cannot drive it (control characters
// escaped), and the progress bar never shares a line with other output.
#include <cstdio>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "reports/console.hpp"
#include "reports/progress_bar.hpp"
#include "reports/terminal_text.hpp"
#include "tests/unit/reports/sample_run.hpp"

namespace zb::reports {
namespace {

TEST(TerminalText, EscapesEveryControlCharacterOfAField) {
  EXPECT_EQ(terminal_field("H200\x1b[2J"), "H200\\x1b[2J");
  EXPECT_EQ(terminal_field("a\nb\rc\td\x7f"), "a\\x0ab\\x0dc\\x09d\\x7f");
  EXPECT_EQ(terminal_field(std::string("nul\0byte", 8)), "nul\\x00byte");
  EXPECT_EQ(terminal_field("\xc2\x9b"
                           "2J"),
            "\\u009b2J");  // C1 CSI, as UTF-8
  EXPECT_EQ(terminal_field("\x9b"
                           "2J"),
            "\\x9b2J");  // a lone 8-bit CSI byte
  EXPECT_EQ(terminal_field("abc\xe2\x80\xae"
                           "fed"),
            "abc\\u202efed");                                    // right-to-left override
  EXPECT_EQ(terminal_field("\xe0\x80\x80"), "\\xe0\\x80\\x80");  // overlong: not UTF-8
  EXPECT_EQ(terminal_field("1.84\u00d7 789 \u00b5s \u2014 ok"), "1.84\u00d7 789 \u00b5s \u2014 ok");
}

TEST(TerminalText, KeepsTheLayoutOfWholeLines) {
  EXPECT_EQ(terminal_text("one\n\ttwo\x1b[H\n"), "one\n\ttwo\\x1b[H\n");
  EXPECT_EQ(terminal_text(terminal_field("x\ny")), "x\\x0ay");  // escaping twice changes nothing
}

// A GPU name (a free-form string of a custom cluster) that clears the screen and prints a line of its
// own claiming success, while a gate of the sample run fails.
TEST(ConsoleSummary, AHostileGpuNameCannotClearTheScreenOrFakeALine) {
  RunResult run = test::sample_run();
  run.scenario.cluster.preset.clear();
  run.scenario.cluster.gpu.name = "H200\x1b[2J\x1b[H\nall gates passed\r";
  const std::string text = console_summary(summarize_run(run), ConsoleLayout::full());
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text.find('\r'), std::string::npos) << text;
  EXPECT_EQ(text.find('\x07'), std::string::npos) << text;
  EXPECT_EQ(text.find("\nall gates passed"), std::string::npos) << text;
  EXPECT_NE(text.find("H200\\x1b[2J\\x1b[H\\x0aall gates passed\\x0d"), std::string::npos) << text;
  EXPECT_NE(text.find("1 of 2 gates FAILED (exit 1)"), std::string::npos) << text;
}

// Everything the bar printed into a memory stream.
class Captured {
 public:
  Captured() : file_(open_memstream(&data_, &size_)) {}
  ~Captured() {
    std::fclose(file_);
    std::free(data_);
  }
  Captured(const Captured&) = delete;
  Captured& operator=(const Captured&) = delete;
  std::FILE* file() { return file_; }
  std::string text() {
    std::fflush(file_);
    return {data_, size_};
  }

 private:
  char* data_ = nullptr;
  std::size_t size_ = 0;
  std::FILE* file_;
};

const std::string erase = "\r\033[K";

TEST(ProgressBar, ALinePrintedDuringTheRunStartsOnALineOfItsOwnAndTheBarComesBack) {
  Captured out;
  ProgressBar bar(out.file(), true);
  bar.update({"zeppelin", 0, 2, 0, 3});
  const std::string drawn = out.text();
  EXPECT_EQ(drawn.rfind(erase, 0), 0U) << drawn;
  EXPECT_NE(drawn.find("zeppelin  iteration 1/3"), std::string::npos) << drawn;
  bar.note("zeppelin: iteration 1");
  const std::string after = out.text().substr(drawn.size());
  EXPECT_EQ(after.rfind(erase + "zeppelin: iteration 1\n" + erase + "[", 0), 0U) << after;
}

TEST(ProgressBar, ClearErasesTheBarBeforeTheSummaryAndOnlyOnce) {
  Captured out;
  ProgressBar bar(out.file(), true);
  bar.update({"ring/cp\x1b[2J", 1, 2, 2, 3});
  EXPECT_NE(out.text().find("] ring/cp\\x1b[2J  iteration 3/3"), std::string::npos) << out.text();
  const std::size_t before = out.text().size();
  bar.clear();
  EXPECT_EQ(out.text().substr(before), erase);
  bar.clear();
  EXPECT_EQ(out.text().size(), before + erase.size());  // nothing to erase twice, nor at destruction
}

TEST(ProgressBar, WithoutATerminalOnlyTheLinesArePrinted) {
  Captured out;
  {
    ProgressBar bar(out.file(), false);
    bar.update({"zeppelin", 0, 1, 0, 1});
    bar.note("zeppelin: iteration 0");
    bar.clear();
  }
  EXPECT_EQ(out.text(), "zeppelin: iteration 0\n");
}

}  // namespace
}  // namespace zb::reports
