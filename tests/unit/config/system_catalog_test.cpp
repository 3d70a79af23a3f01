#include "core/config/system_catalog.hpp"

#include <gtest/gtest.h>

#include "core/config/did_you_mean.hpp"

namespace zb {
namespace {

TEST(SystemCatalog, KnowsTheSystemsAndTheirDefaults) {
  EXPECT_EQ(system_names(), (std::vector<std::string>{"zeppelin", "ring-cp", "uniform-cp"}));
  const SystemInfo* zeppelin = find_system("zeppelin");
  ASSERT_NE(zeppelin, nullptr);
  EXPECT_EQ(zeppelin->default_options(),
            (nlohmann::json{{"routing", true}, {"remap", true}, {"partitioning", "hierarchical"}}));
  EXPECT_TRUE(find_system("ring-cp")->options.empty());
  EXPECT_EQ(find_system("uniform-cp")->default_options(), (nlohmann::json{{"degree", "auto"}}));
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
  EXPECT_EQ(describe_option_type(degree), "int >= 1 or \"auto\"");
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
