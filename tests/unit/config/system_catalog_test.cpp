#include "core/config/system_catalog.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/common/error.hpp"
#include "core/config/did_you_mean.hpp"
#include "core/config/jsonc.hpp"
#include "core/config/scenario_loader.hpp"
#include "tests/unit/config/base_scenario.hpp"

namespace zb {
namespace {

// The catalog is filled by the strategies' registrations (this binary links zb_strategies); these
// tests pin the built-in strategies' schemas, tests/unit/strategies/registry_test.cpp the registry itself.
TEST(SystemCatalog, KnowsTheSystemsAndTheirDefaults) {
  const std::vector<std::string> names = system_names();
  ASSERT_GE(names.size(), 3u);
  EXPECT_EQ(names[0], "zeppelin");  // listed first, then the baselines in their registered order
  EXPECT_LT(std::find(names.begin(), names.end(), "ring-cp"),
            std::find(names.begin(), names.end(), "uniform-cp"));
  EXPECT_FALSE(find_system("zeppelin")->baseline);
  EXPECT_TRUE(find_system("ring-cp")->baseline);
  EXPECT_TRUE(find_system("uniform-cp")->baseline);
  const SystemInfo* zeppelin = find_system("zeppelin");
  ASSERT_NE(zeppelin, nullptr);
  EXPECT_EQ(zeppelin->default_options(), (nlohmann::json{{"routing", true},
                                                         {"remap", true},
                                                         {"partitioning", "hierarchical"},
                                                         {"remap_policy", "where-it-pays"},
                                                         {"heads", "ring"},
                                                         {"best_of", false}}));
  EXPECT_EQ(find_system("ring-cp")->default_options(),
            (nlohmann::json{{"degree", "auto"}, {"dealing", "balanced"}}));
  EXPECT_EQ(find_system("uniform-cp")->default_options(),
            (nlohmann::json{{"degree", "auto"}, {"dealing", "balanced"}}));
  EXPECT_EQ(find_system("zepelin"), nullptr);
}

TEST(SystemCatalog, DefaultLabelIsTheNameWhenEveryOptionIsDefault) {
  const SystemInfo& zeppelin = *find_system("zeppelin");
  EXPECT_EQ(default_label(zeppelin, nlohmann::json::object()), "zeppelin");
  EXPECT_EQ(default_label(zeppelin, zeppelin.default_options()), "zeppelin");
  EXPECT_EQ(default_label(*find_system("ring-cp"), nlohmann::json::object()), "ring-cp");
  EXPECT_EQ(default_label(*find_system("uniform-cp"), nlohmann::json{{"degree", "auto"}}), "uniform-cp");
}

TEST(SystemCatalog, DefaultLabelListsChangedOptionsInCatalogOrder) {
  const SystemInfo& zeppelin = *find_system("zeppelin");
  EXPECT_EQ(default_label(zeppelin, nlohmann::json{{"routing", false}}), "zeppelin[routing=false]");
  EXPECT_EQ(
      default_label(zeppelin, nlohmann::json{{"partitioning", "flat"}, {"routing", false}, {"remap", true}}),
      "zeppelin[routing=false,partitioning=flat]");
  EXPECT_EQ(default_label(*find_system("uniform-cp"), nlohmann::json{{"degree", 8}}), "uniform-cp[degree=8]");
}

TEST(SystemCatalog, OptionValuesAreChecked) {
  const SystemInfo& zeppelin = *find_system("zeppelin");
  EXPECT_EQ(check_option_value(*zeppelin.find_option("routing"), false), "");
  EXPECT_NE(check_option_value(*zeppelin.find_option("routing"), "no"), "");
  EXPECT_EQ(check_option_value(*zeppelin.find_option("partitioning"), "flat"), "");
  EXPECT_NE(check_option_value(*zeppelin.find_option("partitioning"), "deep"), "");
  const SystemOption& degree = *find_system("uniform-cp")->find_option("degree");
  EXPECT_EQ(check_option_value(degree, 8), "");
  EXPECT_EQ(check_option_value(degree, "auto"), "");
  EXPECT_NE(check_option_value(degree, 0), "");
  EXPECT_NE(check_option_value(degree, -4), "");
  EXPECT_NE(check_option_value(degree, 2.5), "");
  EXPECT_NE(check_option_value(degree, "eight"), "");
  EXPECT_EQ(check_option_value(degree, "per-batch"), "");  // the keyword uniform-cp adds to "auto"
  EXPECT_EQ(describe_option_type(degree), "int >= 1 or \"auto\" | \"per-batch\"");
  const SystemOption& ring_degree = *find_system("ring-cp")->find_option("degree");
  EXPECT_NE(check_option_value(ring_degree, "per-batch"), "");  // ring-cp has no per-batch form
  EXPECT_EQ(describe_option_type(ring_degree), "int >= 1 or \"auto\"");
}

TEST(SystemCatalog, UnknownSystemErrorListsTheRegisteredNames) {
  nlohmann::json j = parse_jsonc(test::base_scenario_text, "base.json");
  j["systems"][1] = "nosuch";
  std::string expected;
  for (const std::string& name : system_names()) expected += (expected.empty() ? "\"" : ", \"") + name + "\"";
  try {
    (void)parse_scenario(j.dump(), "dir/scenario.json");
    FAIL() << "an unknown system was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    ASSERT_EQ(e.problems().size(), 1u) << e.what();
    EXPECT_EQ(e.problems()[0].where.json_path, "systems[1]");
    EXPECT_EQ(e.problems()[0].what, "unknown system \"nosuch\"; the systems are " + expected);
  }
}

TEST(SystemCatalog, TheDegreeCheckIsUniformCpsOwnHook) {
  const SystemInfo& uniform = *find_system("uniform-cp");
  ASSERT_TRUE(uniform.validate);
  EXPECT_TRUE(uniform.check(nlohmann::json{{"degree", 4}}, SystemCheckContext{16}).empty());
  EXPECT_TRUE(uniform.check(nlohmann::json{{"degree", 3}}, SystemCheckContext{std::nullopt}).empty());
  const auto problems = uniform.check(nlohmann::json{{"degree", 3}}, SystemCheckContext{16});
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].option, "degree");
  EXPECT_EQ(problems[0].what, "degree 3 does not divide the world size 16 (nodes x gpus_per_node)");
}

TEST(DidYouMean, SuggestsCloseWordsOnly) {
  EXPECT_EQ(edit_distance("bandwith", "bandwidth"), 1u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  const std::vector<std::string> names{"wikipedia", "github", "arxiv"};
  EXPECT_EQ(closest_match("wikipeda", names), "wikipedia");
  EXPECT_EQ(closest_match("GitHub", names), "github");
  EXPECT_EQ(closest_match("books", names), "");
  EXPECT_EQ(did_you_mean("arxv", names), "did you mean \"arxiv\"?");
  EXPECT_EQ(suggestion_hint("books", names), "expected one of: \"wikipedia\", \"github\", \"arxiv\"");
}

}  // namespace
}  // namespace zb
