#include "core/config/jsonc.hpp"

#include <gtest/gtest.h>

#include <string>

#include "core/common/error.hpp"

namespace zb {
namespace {

Error error_of(const std::string& text) {
  try {
    (void)parse_jsonc(text, "x.json");
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "expected an error for: " << text.substr(0, 80);
  return Error(ExitCode::ok, {});
}

TEST(Jsonc, CommentsAreIgnoredButNotInsideStrings) {
  const nlohmann::json j = parse_jsonc(R"({
    // a line comment
    "url": "http://example.org/*not a comment*/", /* block
    comment */ "n": 2 // trailing
  })",
                                       "x.json");
  EXPECT_EQ(j["url"], "http://example.org/*not a comment*/");
  EXPECT_EQ(j["n"], 2);
}

TEST(Jsonc, EscapedQuoteDoesNotEndTheString) {
  const nlohmann::json j = parse_jsonc(R"({"a": "say \"//hi\"", "b": 1})", "x.json");
  EXPECT_EQ(j["a"], "say \"//hi\"");
}

TEST(Jsonc, StrippingKeepsLinesAndColumns) {
  const std::string text = "{\n/* one\n two */ \"a\": 1,\n  \"b\": ]\n}";
  const std::string stripped = strip_jsonc_comments(text, "x.json");
  ASSERT_EQ(stripped.size(), text.size());
  EXPECT_EQ(std::count(stripped.begin(), stripped.end(), '\n'), 4);
  const Error e = error_of(text);
  ASSERT_EQ(e.problems().size(), 1u);
  EXPECT_EQ(e.code(), ExitCode::bad_input);
  EXPECT_EQ(e.problems()[0].where.file, "x.json");
  EXPECT_EQ(e.problems()[0].where.line, 4);
  EXPECT_EQ(e.problems()[0].where.column, 8);
  EXPECT_NE(std::string(e.what()).find("x.json:4:8"), std::string::npos) << e.what();
}

TEST(Jsonc, UnterminatedBlockCommentNamesWhereItStarts) {
  const Error e = error_of("{\n  \"a\": 1 /* never closed\n}");
  ASSERT_EQ(e.problems().size(), 1u);
  EXPECT_EQ(e.problems()[0].where.line, 2);
  EXPECT_EQ(e.problems()[0].where.column, 10);
  EXPECT_NE(e.problems()[0].what.find("never closed"), std::string::npos);
}

TEST(Jsonc, ColumnsCountCharactersNotBytes) {
  const Error e = error_of("{\"\u00e9\u00e9\": x}");
  EXPECT_EQ(e.problems()[0].where.line, 1);
  EXPECT_EQ(e.problems()[0].where.column, 8);
}

TEST(Jsonc, NestingUpToTheLimitIsAccepted) {
  const std::string text = std::string(max_jsonc_depth, '[') + std::string(max_jsonc_depth, ']');
  EXPECT_NO_THROW((void)parse_jsonc(text, "x.json"));
}

TEST(Jsonc, NestingBeyondTheLimitIsRejectedWithItsPosition) {
  const std::string text = std::string(max_jsonc_depth + 1, '[') + std::string(max_jsonc_depth + 1, ']');
  const Error e = error_of(text);
  EXPECT_EQ(e.code(), ExitCode::bad_input);
  EXPECT_NE(e.problems()[0].what.find("nested deeper than 64"), std::string::npos);
  EXPECT_EQ(e.problems()[0].where.column, max_jsonc_depth + 1);
}

TEST(Jsonc, VeryDeepInputDoesNotCrash) {
  const std::string text = std::string(1'000'000, '[');  // also unterminated
  const Error e = error_of(text);
  EXPECT_EQ(e.code(), ExitCode::bad_input);
  EXPECT_NE(e.problems()[0].what.find("nested deeper"), std::string::npos);
}

TEST(Jsonc, HugeInputIsRejectedBeforeParsing) {
  std::string text = "{\"a\": \"" + std::string(max_jsonc_bytes, 'x') + "\"}";
  const Error e = error_of(text);
  EXPECT_EQ(e.code(), ExitCode::bad_input);
  EXPECT_NE(e.problems()[0].what.find("16 MiB"), std::string::npos);
}

TEST(Jsonc, RepeatedKeyIsReportedWithItsPath) {
  const Error e = error_of(
      R"({"cluster": {"nic": {"bandwidth": "1 GB/s", "bandwidth": "2 GB/s"}}, "s": [{}, {"a":1,"a":2}]})");
  ASSERT_EQ(e.problems().size(), 2u);
  EXPECT_EQ(e.problems()[0].where.json_path, "cluster.nic.bandwidth");
  EXPECT_EQ(e.problems()[1].where.json_path, "s[1].a");
}

TEST(Jsonc, NumberTooLargeForADoubleIsBadInputWithItsPosition) {
  const Error e = error_of("{\n  \"seed\": 1e400\n}");
  EXPECT_EQ(e.code(), ExitCode::bad_input);
  EXPECT_EQ(e.problems()[0].where.line, 2);
  EXPECT_EQ(e.problems()[0].where.column, 11);
  EXPECT_NE(e.problems()[0].what.find("1e400"), std::string::npos);
}

// nlohmann's lexer takes a NUL byte for the end of the input: before the check, everything after one was
// silently ignored, and one inside a comment vanished with the comment (issue 17, item 7).
TEST(Jsonc, NulByteAnywhereIsBadInputWithItsPosition) {
  using namespace std::string_literals;
  for (const std::string& text : {"{\"name\": \"x\"}\n\0{\"seed\": -1}"s, "{\"name\": \"x\"}\n\0"s,
                                  "{\"name\": \"x\" // a\0comment\n}"s}) {
    const Error e = error_of(text);
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    ASSERT_EQ(e.problems().size(), 1u);
    EXPECT_NE(e.problems()[0].what.find("NUL byte"), std::string::npos) << e.what();
  }
  const Error e = error_of("{\"name\": \"x\"}\n\0{\"seed\": -1}"s);
  EXPECT_EQ(e.problems()[0].where.line, 2);
  EXPECT_EQ(e.problems()[0].where.column, 1);
}

// Arrays of objects parse in one pass (issue 38: nlohmann's callback parser rescanned the parent array
// at every object's end, so 400k "{}" took 32 s), and the path of a problem deep in one is still exact:
// the repeated key in the last of 200k objects, and the tree built around it whole.
TEST(Jsonc, ALongArrayOfObjectsKeepsItsPathsAndValues) {
  std::string text = "{\"runs\": [";
  for (int i = 0; i < 200000; ++i) text += i == 0 ? "{\"i\": 0}" : ", {\"i\": " + std::to_string(i) + "}";
  const nlohmann::json parsed = parse_jsonc(text + "]}", "big.json");
  ASSERT_EQ(parsed["runs"].size(), 200000u);
  EXPECT_EQ(parsed["runs"][199999]["i"], 199999);
  const Error e = error_of(text + ", {\"i\": 1, \"i\": 2}]}");
  ASSERT_EQ(e.problems().size(), 1u);
  EXPECT_EQ(e.problems()[0].where.json_path, "runs[200000].i") << e.what();
  EXPECT_NE(e.problems()[0].what.find("more than once"), std::string::npos);
}

TEST(Jsonc, MissingFileIsBadInput) {
  try {
    (void)read_jsonc_file("/nonexistent/zeppelin/scenario.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    EXPECT_NE(std::string(e.what()).find("no such file"), std::string::npos);
  }
}

}  // namespace
}  // namespace zb
