// Lengths files: the accepted format, and errors that name the file and the line.
#include "core/workload/lengths_file.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "core/common/error.hpp"
#include "core/config/document_limit.hpp"
#include "core/workload/workload.hpp"
#include "test_helpers.hpp"

namespace zb {
namespace {

using testing::TempFile;

// Runs the reader on `content` and returns the one problem it reports.
Problem read_error(std::string_view name, std::string_view content) {
  const TempFile file(name, content);
  try {
    (void)read_lengths_file(file.path());
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    EXPECT_EQ(e.problems().size(), 1u);
    Problem problem = e.problems().front();
    EXPECT_EQ(problem.where.file, file.path().string());
    return problem;
  }
  ADD_FAILURE() << "no error for " << name;
  return {};
}

TEST(LengthsFile, ReadsIntegersCommentsAndBlankLines) {
  const TempFile file("good.txt",
                      "# lengths of a toy corpus\n100\n\n  200  \n300 # trailing comment\r\n\t4\n5");
  EXPECT_EQ(read_lengths_file(file.path()), (std::vector<std::int64_t>{100, 200, 300, 4, 5}));
}

TEST(LengthsFile, MalformedLineNamesFileAndLineNumber) {
  const Problem problem = read_error("letters.txt", "100\n200\n# comment\n\nabc\n300\n");
  EXPECT_EQ(problem.where.line, 5);
  // The message reads file:line: what, like a compiler's.
  EXPECT_NE(problem.str().find(problem.where.file + ":5: "), std::string::npos) << problem.str();
  EXPECT_NE(problem.what.find("'abc'"), std::string::npos) << problem.what;
  EXPECT_FALSE(problem.hint.empty());
}

TEST(LengthsFile, RejectsDecimalsSignsTrailingTextAndTwoNumbers) {
  EXPECT_EQ(read_error("decimal.txt", "1\n2.5\n").where.line, 2);
  EXPECT_EQ(read_error("plus.txt", "+7\n").where.line, 1);
  EXPECT_EQ(read_error("unit.txt", "1\n2\n3 tokens\n").where.line, 3);
  EXPECT_EQ(read_error("two.txt", "1 2\n").where.line, 1);
}

TEST(LengthsFile, RejectsZeroNegativeAndOverflow) {
  EXPECT_EQ(read_error("zero.txt", "5\n0\n").where.line, 2);
  EXPECT_EQ(read_error("negative.txt", "5\n6\n-3\n").where.line, 3);
  const Problem overflow = read_error("huge.txt", "99999999999999999999999\n");
  EXPECT_EQ(overflow.where.line, 1);
  EXPECT_NE(overflow.what.find("too large"), std::string::npos) << overflow.what;
}

// A document longer than the longest this build plans (2^30 tokens; its causal pairs would overflow
// std::int64_t past about 3e9) is refused at its line, saying the limit and what to do; 2^30 itself is read.
TEST(LengthsFile, RejectsADocumentLongerThanTheLongestSupported) {
  const Problem longer = read_error("long.txt", "2048\n# a book\n4000000000\n512\n");
  EXPECT_EQ(longer.where.line, 3);
  EXPECT_NE(longer.what.find("length 4000000000 is longer than the longest document this build plans, "
                             "1073741824 (2^30) tokens"),
            std::string::npos)
      << longer.what;
  EXPECT_NE(longer.hint.find("split it into lines of at most 1073741824"), std::string::npos) << longer.hint;
  EXPECT_EQ(read_error("one_more.txt", "1073741825\n").where.line, 1);
  const TempFile longest("longest.txt", "1073741824\n1\n");
  EXPECT_EQ(read_lengths_file(longest.path()), (std::vector<std::int64_t>{kMaxDocumentLength, 1}));
}

TEST(LengthsFile, EmptyOrCommentOnlyFileIsAnError) {
  EXPECT_NE(read_error("empty.txt", "").what.find("no lengths"), std::string::npos);
  EXPECT_NE(read_error("comments.txt", "# nothing here\n\n").what.find("no lengths"), std::string::npos);
}

TEST(LengthsFile, MissingFileNamesTheFile) {
  const auto missing = std::filesystem::temp_directory_path() / "zb-workload-test-does-not-exist.txt";
  try {
    (void)read_lengths_file(missing);
    FAIL() << "no error for a missing file";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    EXPECT_EQ(e.problems().front().where.file, missing.string());
    EXPECT_NE(std::string(e.what()).find(missing.string()), std::string::npos) << e.what();
  }
}

TEST(LengthsFile, DirectoryIsNotALengthsFile) {
  EXPECT_THROW((void)read_lengths_file(std::filesystem::temp_directory_path()), Error);
}

// The stream entry point (the fuzz target's) is the same parser: same lengths, same line numbers.
TEST(LengthsFile, StreamIsParsedAsTheFileIs) {
  std::istringstream good("# toy\n100\n\n 200 # two hundred\n");
  EXPECT_EQ(parse_lengths(good, "in-memory"), (std::vector<std::int64_t>{100, 200}));
  std::istringstream bad("100\n\nabc\n");
  try {
    (void)parse_lengths(bad, "in-memory");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    EXPECT_EQ(e.problems().front().where.file, "in-memory");
    EXPECT_EQ(e.problems().front().where.line, 3);
  }
}

TEST(LengthsFile, WorkloadDrawsOnlyLengthsFromTheFile) {
  const TempFile file("workload.txt", "1000\n3000\n5000\n");
  Scenario scenario = testing::scenario_with_dataset("");
  scenario.workload.source = WorkloadSource::lengths_file;
  scenario.workload.lengths_file = file.path();
  scenario.workload.tokens_per_iteration = 100000;
  const Workload workload(scenario);
  const Batch batch = workload.batch(0);
  EXPECT_EQ(batch.total_tokens(), 100000);
  for (std::size_t i = 0; i + 1 < batch.lengths.size(); ++i) {  // the last one may be shortened
    EXPECT_TRUE(batch.lengths[i] == 1000 || batch.lengths[i] == 3000 || batch.lengths[i] == 5000);
  }
}

TEST(LengthsFile, WorkloadWithBadFileFailsAtConstruction) {
  const TempFile file("bad-workload.txt", "1000\nfoo\n");
  Scenario scenario = testing::scenario_with_dataset("");
  scenario.workload.source = WorkloadSource::lengths_file;
  scenario.workload.lengths_file = file.path();
  try {
    const Workload workload(scenario);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.problems().front().where.line, 2);
  }
}

}  // namespace
}  // namespace zb
