// The JSON report: pinned by a golden file (tests/golden/report_sample.json) built from the hand-made
// sample run with its volatile fields nulled. After an intended format change, regenerate it with
//   ZB_UPDATE_GOLDEN=1 ./zb_reports_tests --gtest_filter='JsonReport.*'
// and review the diff (docs/REPORT_FORMAT.md must describe every change).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "reports/atomic_write.hpp"
#include "reports/json_report.hpp"
#include "tests/unit/reports/sample_run.hpp"

namespace zb::reports {
namespace {

const std::filesystem::path golden_path =
    std::filesystem::path(ZB_SOURCE_DIR) / "tests/golden/report_sample.json";

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

nlohmann::ordered_json sample_report(const RunContext& context) {
  const RunResult run = test::sample_run();
  return report_json(run, summarize_run(run), context);
}

// Equal JSON, numbers within a relative 1e-12 (the last bits of a sum may differ between compilers and
// libms; the 17th digit is not part of the format). Reports where the first difference is.
void expect_json_near(const nlohmann::json& actual, const nlohmann::json& expected,
                      const std::string& where) {
  if (actual.is_number() && expected.is_number()) {
    const double a = actual.get<double>();
    const double e = expected.get<double>();
    EXPECT_LE(std::fabs(a - e), 1e-12 * std::max(std::fabs(a), std::fabs(e)))
        << where << ": " << a << " vs " << e;
    return;
  }
  ASSERT_EQ(actual.type(), expected.type()) << where << ": " << actual << " vs " << expected;
  if (actual.is_object()) {
    ASSERT_EQ(actual.size(), expected.size()) << where << ": other keys";
    for (auto it = expected.begin(); it != expected.end(); ++it) {
      ASSERT_TRUE(actual.contains(it.key())) << where << "/" << it.key() << " is missing";
      expect_json_near(actual[it.key()], it.value(), where + "/" + it.key());
    }
  } else if (actual.is_array()) {
    ASSERT_EQ(actual.size(), expected.size()) << where << ": other length";
    for (std::size_t i = 0; i < actual.size(); ++i)
      expect_json_near(actual[i], expected[i], where + "/" + std::to_string(i));
  } else {
    EXPECT_EQ(actual, expected) << where;
  }
}

TEST(JsonReport, MatchesGoldenFile) {
  // The real context (host, clock, environment) proves that nulling the volatile fields is enough.
  const std::string actual = dump_report(without_volatile_fields(sample_report(capture_run_context("sim"))));
  const char* update = std::getenv("ZB_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    write_file_atomically(golden_path, actual);
    GTEST_SKIP() << "golden file rewritten: " << golden_path;
  }
  ASSERT_TRUE(std::filesystem::exists(golden_path))
      << "missing " << golden_path << "; run with ZB_UPDATE_GOLDEN=1";
  SCOPED_TRACE("the JSON report changed; if intended, regenerate with ZB_UPDATE_GOLDEN=1");
  expect_json_near(nlohmann::json::parse(actual), nlohmann::json::parse(read_text(golden_path)), "");
  // Key order is part of the format (two reports diff cleanly): the same keys in the same order.
  auto key_order = [](const std::string& text) {
    std::vector<std::string> keys;
    const nlohmann::ordered_json flat = nlohmann::ordered_json::parse(text).flatten();
    for (const auto& item : flat.items()) keys.push_back(item.key());
    return keys;
  };
  EXPECT_EQ(key_order(actual), key_order(read_text(golden_path)));
}

TEST(JsonReport, VolatileFieldsAreTheOnlyDifferenceBetweenContexts) {
  RunContext other = test::fixed_context();
  other.host.name = "another-host";
  other.host.gpus.clear();
  other.argv = {"zeppelin-bench", "run", "/elsewhere/sample.json"};
  other.git_dirty = true;
  other.date_utc = "2030-05-05T05:05:05Z";
  other.git_sha = "fedcba987654";
  EXPECT_NE(sample_report(test::fixed_context()), sample_report(other));
  EXPECT_EQ(without_volatile_fields(sample_report(test::fixed_context())),
            without_volatile_fields(sample_report(other)));
}

TEST(JsonReport, CarriesContextSamplesAndGates) {
  const nlohmann::ordered_json report = sample_report(test::fixed_context());
  EXPECT_EQ(report["schema_version"], 2);
  EXPECT_EQ(report["provenance"]["nccl_environment"]["NCCL_IB_HCA"], "mlx5");
  EXPECT_EQ(report["run"]["effective_scenario"]["name"], "sample");
  EXPECT_TRUE(report["run"]["simulated"].get<bool>());
  ASSERT_EQ(report["systems"].size(), 3U);
  const auto& zeppelin = report["systems"][0];
  EXPECT_EQ(zeppelin["samples"]["iteration_seconds"].size(), 3U);
  EXPECT_EQ(zeppelin["nic"]["per_nic"].size(), 4U);
  EXPECT_EQ(zeppelin["ring_steps"].size(), 1U);
  const auto& oom = report["systems"][2];
  EXPECT_EQ(oom["feasible_iterations"], 0);
  EXPECT_EQ(oom["memory"]["oom"].size(), 3U);
  EXPECT_TRUE(oom["samples"]["iteration_seconds"].empty());
  ASSERT_EQ(report["gates"].size(), 2U);
  EXPECT_TRUE(report["gates"][0]["passed"].get<bool>());
  EXPECT_FALSE(report["gates"][1]["passed"].get<bool>());
  EXPECT_FALSE(report["verdict"]["gates_passed"].get<bool>());
  // Speed-ups against every baseline that ran: zeppelin vs ring-cp, nothing against the OOM system.
  ASSERT_EQ(report["comparisons"].size(), 1U);
  EXPECT_EQ(report["comparisons"][0]["system"], "zeppelin");
  EXPECT_GT(report["comparisons"][0]["speedup"].get<double>(), 1.4);
}

TEST(JsonReport, WriteIsAtomicAndCreatesTheFolder) {
  const std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "zb_json_report" / "nested";
  std::filesystem::remove_all(dir.parent_path());
  const RunResult run = test::sample_run();
  write_json_report(run, summarize_run(run), test::fixed_context(), dir / "report.json");
  ASSERT_TRUE(std::filesystem::exists(dir / "report.json"));
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    ++files;
    EXPECT_EQ(entry.path().filename(), "report.json") << "temporary file left behind";
  }
  EXPECT_EQ(files, 1);
  EXPECT_EQ(nlohmann::json::parse(read_text(dir / "report.json"))["schema_version"], 2);
}

}  // namespace
}  // namespace zb::reports
