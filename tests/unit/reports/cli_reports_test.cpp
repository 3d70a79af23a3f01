// The reports of real quickstart runs, through the built CLI:
// - the effective scenario a report holds, run again without any flag, reproduces the run (item 3);
// - github-action-benchmark, as documented in docs/REPORT_FORMAT.md, raises no alert when only the seed
//   changed (item 4): its rule is every entry's real_time it is given against the first entry of the same
//   name in the previous point, alert when current / previous exceeds the threshold (200 % by default; its
//   source, src/write.ts findAlerts and getRatio, tool googlecpp being smaller-is-better); the documented
//   workflow gives it the gbench file's aggregates (issue 37: the iteration entries share a name).
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>

#include "reports/json_report.hpp"

namespace zb::reports {
namespace {

const std::filesystem::path cli(ZB_CLI_PATH);
const std::filesystem::path source_dir(ZB_SOURCE_DIR);

std::filesystem::path scratch(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "zb_cli_reports" / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

int run_cli(const std::string& arguments) {
  const int status = std::system((cli.string() + " " + arguments + " > /dev/null 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

nlohmann::ordered_json read_json(const std::filesystem::path& path) {
  return nlohmann::ordered_json::parse(read_text(path));
}

const std::string quickstart = (source_dir / "scenarios/quickstart.json").string();

TEST(ReportReproducesItsRun, TheEffectiveScenarioRunsAgainToTheSameResults) {
  if (!std::filesystem::exists(cli)) GTEST_SKIP() << "zeppelin-bench not built";
  const std::filesystem::path first = scratch("first");
  const std::filesystem::path again = scratch("again");
  ASSERT_EQ(
      run_cli("run " + quickstart + " --iterations 2 --seed 5 --quiet --format json --out " + first.string()),
      0);
  const nlohmann::ordered_json report = read_json(first / "report.json");
  const nlohmann::ordered_json& run = report["run"];
  EXPECT_EQ(run["seed"], 5);
  EXPECT_EQ(run["iterations"], 2);
  EXPECT_EQ(run["backend"], "sim");
  EXPECT_EQ(run["overrides"].size(), 4U);  // --iterations, --seed, --out, --format
  const nlohmann::ordered_json& provenance = report["provenance"];
  EXPECT_EQ(provenance["argv"][1], "run");
  EXPECT_EQ(provenance["argv"].back(), first.string());
  EXPECT_TRUE(provenance["git"]["dirty"].is_boolean());
  EXPECT_EQ(provenance["git"]["sha"].get<std::string>().size(), 12U);
  EXPECT_TRUE(provenance["host"]["logical_cpus"].get<int>() > 0);

  // The effective scenario, as a file of its own, with no flag but where to write.
  // The file lives beside the output folder: a report set replaces its folder, which holds only reports.
  nlohmann::ordered_json scenario = run["effective_scenario"];
  scenario["output"]["dir"] = (again / "out").string();
  const std::filesystem::path scenario_file = again / "effective.json";
  std::ofstream(scenario_file) << scenario.dump(2);
  ASSERT_EQ(run_cli("run " + scenario_file.string() + " --quiet"), 0);
  const nlohmann::ordered_json rerun = read_json(again / "out" / "report.json");
  EXPECT_EQ(rerun["run"]["seed"], 5);
  EXPECT_TRUE(rerun["run"]["overrides"].empty());
  const nlohmann::ordered_json a = without_volatile_fields(report);
  const nlohmann::ordered_json b = without_volatile_fields(rerun);
  EXPECT_EQ(a["workload"], b["workload"]);
  EXPECT_EQ(a["systems"], b["systems"]);
  EXPECT_EQ(a["gates"], b["gates"]);
}

struct GbenchPoint {
  std::string name;
  double real_time = 0;
};

// What the documented workflow hands the action: the aggregates (its jq step keeps run_type "aggregate").
std::vector<GbenchPoint> gbench_points(const std::filesystem::path& file) {
  std::vector<GbenchPoint> out;
  const nlohmann::ordered_json gbench = read_json(file);
  for (const auto& entry : gbench["benchmarks"]) {
    if (entry["run_type"] != "aggregate") continue;
    out.push_back({entry["name"].get<std::string>(), entry["real_time"].get<double>()});
  }
  return out;
}

// github-action-benchmark's alert rule for tool googlecpp (smaller is better), applied as it does.
std::vector<std::string> alerts(const std::vector<GbenchPoint>& previous,
                                const std::vector<GbenchPoint>& current, double threshold) {
  std::vector<std::string> out;
  for (const GbenchPoint& now : current) {
    const auto before = std::find_if(previous.begin(), previous.end(),
                                     [&](const GbenchPoint& p) { return p.name == now.name; });
    if (before == previous.end()) continue;
    const double ratio =
        before->real_time == 0 && now.real_time == 0 ? 1.0 : now.real_time / before->real_time;
    if (ratio > threshold) out.push_back(now.name);
  }
  return out;
}

TEST(GithubActionBenchmark, ASeedChangeWithoutACodeChangeRaisesNoAlert) {
  if (!std::filesystem::exists(cli)) GTEST_SKIP() << "zeppelin-bench not built";
  std::vector<std::vector<GbenchPoint>> runs;
  for (const char* seed : {"1", "2"}) {
    const std::filesystem::path out = scratch(std::string("gbench-seed-") + seed);
    ASSERT_EQ(
        run_cli("run " + quickstart + " --seed " + seed + " --quiet --format gbench --out " + out.string()),
        0);
    runs.push_back(gbench_points(out / "gbench.json"));
  }
  ASSERT_FALSE(runs[0].empty());
  EXPECT_EQ(runs[0].size(), runs[1].size());
  for (const auto& [previous, current] : {std::pair{0, 1}, std::pair{1, 0}}) {
    const std::vector<std::string> raised =
        alerts(runs[static_cast<std::size_t>(previous)], runs[static_cast<std::size_t>(current)], 2.0);
    EXPECT_TRUE(raised.empty()) << "alert on " << raised.front();
  }
  for (const GbenchPoint& point : runs[0]) {
    EXPECT_EQ(point.name.find("_stddev"), std::string::npos) << point.name;
    EXPECT_EQ(point.name.find("_cv"), std::string::npos) << point.name;
  }
}

// The workflow snippet of docs/REPORT_FORMAT.md: the file it reads is the one its run step writes, and it
// keeps history (without a previous point the action has nothing to compare with and never alerts).
TEST(GithubActionBenchmark, TheDocumentedWorkflowKeepsHistoryAndReadsWhatRunWrites) {
  const std::string doc = read_text(source_dir / "docs/REPORT_FORMAT.md");
  const auto start = doc.find("```yaml");
  ASSERT_NE(start, std::string::npos);
  const std::string snippet = doc.substr(start, doc.find("```", start + 7) - start);
  for (const char* needed : {"tool: googlecpp", "output-file-path: out/quickstart/gbench-aggregates.json",
                             "uses: actions/cache", "external-data-json-path:", "fail-on-alert: true",
                             "zeppelin-bench run scenarios/quickstart.json --format gbench",
                             // the action is given the aggregates, made from what the run wrote
                             "jq '.benchmarks |= map(select(.run_type == \"aggregate\"))' "
                             "out/quickstart/gbench.json > out/quickstart/gbench-aggregates.json"}) {
    EXPECT_NE(snippet.find(needed), std::string::npos) << "the snippet lacks: " << needed << "\n" << snippet;
  }
  // The cache step's path holds the data file the action reads and writes.
  std::smatch cache_path;
  ASSERT_TRUE(std::regex_search(snippet, cache_path, std::regex("path: (\\S+)")));
  std::smatch data_file;
  ASSERT_TRUE(std::regex_search(snippet, data_file, std::regex("external-data-json-path: (\\S+)")));
  EXPECT_EQ(data_file[1].str().rfind(cache_path[1].str(), 0), 0U)
      << data_file[1] << " is not under " << cache_path[1];
  // The action cannot see error_occurred (it reads only real_time): a step fails the job on an OOM.
  EXPECT_NE(snippet.find("error_occurred"), std::string::npos);
}

}  // namespace
}  // namespace zb::reports
