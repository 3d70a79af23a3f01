// The scenario's "hardware_profile" key: a profile file resolved against the scenario's folder or an
// inline object; its problems (unknown key, wrong type, out of range, missing or broken file) are exit 2
// naming the file and the key, reported together with the rest of the scenario's problems.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/common/error.hpp"
#include "core/config/jsonc.hpp"
#include "core/config/scenario_loader.hpp"
#include "tests/unit/config/base_scenario.hpp"

namespace zb {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// A fresh folder per test holding the scenario and, where a test writes one, its profile file.
class HardwareProfileKey : public testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() /
              ("zb-profile-" + std::string(testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(folder_);
    fs::create_directories(folder_ / "profiles");
  }
  void TearDown() override { fs::remove_all(folder_); }

  void write(const fs::path& relative, const std::string& text) const {
    std::ofstream(folder_ / relative) << text;
  }
  // Writes the base scenario with "hardware_profile" set to `value` and loads it from disk.
  [[nodiscard]] Scenario load_with(const json& value) const {
    json scenario = parse_jsonc(test::base_scenario_text, "base.json");
    scenario["hardware_profile"] = value;
    write("scenario.json", scenario.dump(2));
    return load_scenario(folder_ / "scenario.json");
  }
  // The problems of loading with `value`; fails the test when the scenario is accepted.
  [[nodiscard]] std::vector<Problem> problems_with(const json& value) const {
    try {
      (void)load_with(value);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::bad_input);
      return e.problems();
    }
    ADD_FAILURE() << "the scenario was accepted with hardware_profile " << value.dump();
    return {};
  }

  fs::path folder_;
};

// Whether some problem sits at `file` and `json_path` and mentions `part` in its text or hint.
bool has_problem(const std::vector<Problem>& problems, const std::string& file, const std::string& json_path,
                 const std::string& part) {
  for (const Problem& p : problems) {
    if (p.where.file == file && p.where.json_path == json_path &&
        (p.what + " " + p.hint).find(part) != std::string::npos)
      return true;
  }
  return false;
}

std::string all_text(const std::vector<Problem>& problems) {
  std::string out;
  for (const Problem& p : problems) out += p.str() + "\n";
  return out;
}

TEST_F(HardwareProfileKey, AbsentMeansDefaults) {
  const Scenario s = parse_scenario(test::base_scenario_text, "base.json");
  EXPECT_EQ(s.hardware_profile.source, "defaults");
  EXPECT_EQ(s.hardware_profile.profile.to_json(), HardwareProfile{}.to_json());
}

TEST_F(HardwareProfileKey, FileIsResolvedAgainstTheScenarioFolder) {
  write("profiles/slow.json",
        "{\n  // measured on our cluster\n  \"gemm_efficiency\": 0.5, \"attention_efficiency\": 0.4\n}\n");
  const Scenario s = load_with("profiles/slow.json");
  EXPECT_EQ(s.hardware_profile.source, (folder_ / "profiles/slow.json").lexically_normal().string());
  EXPECT_DOUBLE_EQ(s.hardware_profile.profile.gemm_efficiency, 0.5);
  EXPECT_DOUBLE_EQ(s.hardware_profile.profile.attention_efficiency, 0.4);
  EXPECT_DOUBLE_EQ(s.hardware_profile.profile.p2p_bandwidth_efficiency,
                   HardwareProfile{}.p2p_bandwidth_efficiency);
}

TEST_F(HardwareProfileKey, InlineObjectOverridesOnlyItsKeys) {
  const Scenario s = load_with(json{{"gemm_efficiency", 0.6}, {"model_state_shards", 8}});
  EXPECT_EQ(s.hardware_profile.source, "inline");
  EXPECT_DOUBLE_EQ(s.hardware_profile.profile.gemm_efficiency, 0.6);
  EXPECT_DOUBLE_EQ(s.hardware_profile.profile.model_state_shards, 8);
  EXPECT_DOUBLE_EQ(s.hardware_profile.profile.attention_efficiency, HardwareProfile{}.attention_efficiency);
}

TEST_F(HardwareProfileKey, InlineUnknownKeyIsNamedWithASuggestion) {
  const auto problems = problems_with(json{{"gemm_efficency", 0.6}});
  const std::string scenario = (folder_ / "scenario.json").string();
  EXPECT_TRUE(has_problem(problems, scenario, "hardware_profile.gemm_efficency", "gemm_efficiency"))
      << all_text(problems);
}

TEST_F(HardwareProfileKey, InlineWrongTypeAndRangeAreNamed) {
  const auto problems = problems_with(json{{"gemm_efficiency", "0.6"}, {"attention_efficiency", 1.5}});
  const std::string scenario = (folder_ / "scenario.json").string();
  EXPECT_TRUE(has_problem(problems, scenario, "hardware_profile.gemm_efficiency", "expected a number"))
      << all_text(problems);
  EXPECT_TRUE(has_problem(problems, scenario, "hardware_profile.attention_efficiency", "out of range"))
      << all_text(problems);
}

TEST_F(HardwareProfileKey, NeitherPathNorObjectIsNamed) {
  const auto problems = problems_with(json::array({0.5}));
  EXPECT_TRUE(
      has_problem(problems, (folder_ / "scenario.json").string(), "hardware_profile", "profile file's path"))
      << all_text(problems);
}

TEST_F(HardwareProfileKey, MissingFileIsNamedWithTheKeyThatPointedThere) {
  const auto problems = problems_with("profiles/no-such.json");
  const std::string file = (folder_ / "profiles/no-such.json").string();
  EXPECT_TRUE(has_problem(problems, file, "", "no such file")) << all_text(problems);
  EXPECT_TRUE(has_problem(problems, file, "", "read for hardware_profile")) << all_text(problems);
}

TEST_F(HardwareProfileKey, FileProblemsNameTheFileAndKey) {
  write("profiles/bad.json", R"({"gemm_efficiency": true, "gemm_half_row": 64})");
  const auto problems = problems_with("profiles/bad.json");
  const std::string file = (folder_ / "profiles/bad.json").string();
  EXPECT_TRUE(has_problem(problems, file, "gemm_efficiency", "expected a number")) << all_text(problems);
  EXPECT_TRUE(has_problem(problems, file, "gemm_half_row", "gemm_half_rows")) << all_text(problems);
}

TEST_F(HardwareProfileKey, FileThatIsNoJsonObjectIsRefused) {
  write("profiles/list.json", "[0.5]");
  write("profiles/broken.json", "{\"gemm_efficiency\": }");
  EXPECT_TRUE(has_problem(problems_with("profiles/list.json"), (folder_ / "profiles/list.json").string(), "",
                          "must be a JSON object"));
  EXPECT_TRUE(has_problem(problems_with("profiles/broken.json"), (folder_ / "profiles/broken.json").string(),
                          "", "syntax error"));
}

TEST_F(HardwareProfileKey, ProfileProblemsComeWithTheScenariosOwn) {
  json scenario = parse_jsonc(test::base_scenario_text, "base.json");
  scenario["hardware_profile"] = json{{"gemm_efficiency", 0}};
  scenario["seed"] = -1;
  try {
    (void)parse_scenario(scenario.dump(), "both.json");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_TRUE(has_problem(e.problems(), "both.json", "seed", "must be >= 0"));
    EXPECT_TRUE(has_problem(e.problems(), "both.json", "hardware_profile.gemm_efficiency", "out of range"));
  }
}

}  // namespace
}  // namespace zb
