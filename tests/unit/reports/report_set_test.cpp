// The output folder (issue 17, item 8): problems found before the run, a report set published as a whole
// (no old file survives next to new ones, an error leaves the previous set), and trace names that never
// collide.
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "core/common/error.hpp"
#include "reports/report_files.hpp"
#include "reports/report_set.hpp"
#include "tests/unit/reports/sample_run.hpp"

namespace zb::reports {
namespace {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::path(testing::TempDir()) / "zb_report_set" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::set<std::string> names_in(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& entry : fs::directory_iterator(dir)) out.insert(entry.path().filename().string());
  return out;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The exit code and message of what `call` throws; fails the test when it throws nothing.
template <class Call>
Error thrown_by(Call&& call) {
  try {
    call();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no zb::Error thrown";
  return Error(ExitCode::ok, Location{}, "");
}

TEST(OutputFolder, UnderARegularFileIsARuntimeFailureNamingTheFile) {
  const fs::path file = scratch("under-a-file") / "a-file";
  std::ofstream(file) << "x";
  const Error e = thrown_by([&] { (void)check_output_folder(file / "out"); });
  EXPECT_EQ(e.code(), ExitCode::runtime);
  EXPECT_NE(std::string(e.what()).find(file.string() + " is not a folder"), std::string::npos) << e.what();
}

TEST(OutputFolder, ADeviceOrFileIsNotAFolder) {
  for (const char* path : {"/dev/full", "/dev/null"}) {
    const Error e = thrown_by([&] { (void)check_output_folder(path); });
    EXPECT_EQ(e.code(), ExitCode::runtime) << path;
    EXPECT_NE(std::string(e.what()).find("exists and is not a folder"), std::string::npos) << e.what();
  }
}

TEST(OutputFolder, ANewFolderGetsItsParentsAndIsResolvedToAnAbsolutePath) {
  const fs::path root = scratch("new");
  const fs::path target = check_output_folder(root / "a" / "b" / "out/");
  EXPECT_EQ(target, root / "a" / "b" / "out");
  EXPECT_TRUE(fs::is_directory(root / "a" / "b"));
  EXPECT_FALSE(fs::exists(target));                                // the set creates it, by a rename
  EXPECT_EQ(names_in(root / "a" / "b"), std::set<std::string>{});  // the probe file is gone
}

TEST(OutputFolder, AFolderWithOtherFilesIsRefusedAndLeftAlone) {
  const fs::path dir = scratch("foreign") / "out";
  fs::create_directories(dir / "notes");
  std::ofstream(dir / "report.json") << "{}";
  std::ofstream(dir / "thesis.tex") << "keep me";
  const Error e = thrown_by([&] { (void)check_output_folder(dir); });
  EXPECT_EQ(e.code(), ExitCode::runtime);
  EXPECT_NE(std::string(e.what()).find("2 entries that are not reports (notes, thesis.tex)"),
            std::string::npos)
      << e.what();
  const RunResult run = test::sample_run();
  EXPECT_THROW((void)write_reports(run, summarize_run(run), test::fixed_context(), dir, {"json"}), Error);
  EXPECT_EQ(read_text(dir / "thesis.tex"), "keep me");
  EXPECT_EQ(read_text(dir / "report.json"), "{}");
}

TEST(ReportSet, ReplacesThePreviousSetAsAWhole) {
  const fs::path root = scratch("replace");
  const fs::path dir = root / "out";
  const RunResult run = test::sample_run();
  (void)write_reports(run, summarize_run(run), test::fixed_context(), dir, {"json", "trace"});
  EXPECT_EQ(names_in(dir),
            (std::set<std::string>{"report.json", "trace-ring-cp.json", "trace-zeppelin.json"}));
  // Again with other formats: the old traces do not stay next to the new report.
  const auto written = write_reports(run, summarize_run(run), test::fixed_context(), dir, {"json", "gbench"});
  EXPECT_EQ(names_in(dir), (std::set<std::string>{"report.json", "gbench.json"}));
  EXPECT_EQ(written, (std::vector<fs::path>{dir / "report.json", dir / "gbench.json"}));
  EXPECT_EQ(names_in(root), std::set<std::string>{"out"});  // no staging or old folder left behind
}

TEST(ReportSet, AFailureWhileWritingLeavesThePreviousSet) {
  const fs::path root = scratch("failure");
  const fs::path dir = root / "out";
  (void)publish_report_set(dir, [](const fs::path& staging) {
    std::ofstream(staging / "report.json") << "old";
    return std::vector<std::string>{"report.json"};
  });
  EXPECT_THROW((void)publish_report_set(dir,
                                        [](const fs::path& staging) -> std::vector<std::string> {
                                          std::ofstream(staging / "report.json") << "new";
                                          throw_runtime_error({}, "disk full");
                                        }),
               Error);
  EXPECT_EQ(read_text(dir / "report.json"), "old");
  EXPECT_EQ(names_in(root), std::set<std::string>{"out"});
}

TEST(ReportSet, KnowsItsOwnFileNames) {
  for (const char* name :
       {"report.json", "report.html", "gbench.json", "trace-zeppelin.json", "trace-a_b-2.json"})
    EXPECT_TRUE(is_report_file_name(name)) << name;
  for (const char* name : {"notes.txt", "trace-.json", "trace-x.html", "report.json.bak", "gbench.json~"})
    EXPECT_FALSE(is_report_file_name(name)) << name;
}

TEST(TraceFileNames, LabelsThatSanitizeAlikeGetDeterministicSuffixes) {
  EXPECT_EQ(trace_file_names({"ring/cp", "ring_cp", "RING_CP", "ring_cp-2", "zeppelin"}),
            (std::vector<std::string>{"trace-ring_cp.json", "trace-ring_cp-2.json", "trace-RING_CP-3.json",
                                      "trace-ring_cp-2-2.json", "trace-zeppelin.json"}));
}

TEST(TraceFileNames, TwoSystemsWhoseLabelsCollideEachKeepTheirTrace) {
  RunResult run = test::sample_run();
  run.systems[0].system.label = "ring/cp";  // zeppelin's trace
  run.systems[1].system.label = "ring_cp";  // ring-cp's trace
  const fs::path dir = scratch("collide") / "out";
  const auto written = write_reports(run, summarize_run(run), test::fixed_context(), dir, {"trace"});
  EXPECT_EQ(written, (std::vector<fs::path>{dir / "trace-ring_cp.json", dir / "trace-ring_cp-2.json"}));
  EXPECT_NE(read_text(dir / "trace-ring_cp.json").find("ring/cp"), std::string::npos);
  EXPECT_NE(read_text(dir / "trace-ring_cp-2.json").find("\"ring_cp\""), std::string::npos);
}

}  // namespace
}  // namespace zb::reports
