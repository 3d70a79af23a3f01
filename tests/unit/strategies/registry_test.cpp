// The strategy registry. This binary registers one extra strategy, "probe", exactly as a strategy file
// does, and checks that the registration alone reaches everything: the catalog and its order, the
// loader (unknown names, option types, defaults, the validation hook) and make_strategy's factory.
// A binary of its own, so that the probe stays out of the property tests' catalog.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <set>

#include "core/common/error.hpp"
#include "core/config/jsonc.hpp"
#include "core/config/scenario_loader.hpp"
#include "core/strategies/registration.hpp"
#include "support.hpp"
#include "tests/unit/config/base_scenario.hpp"

namespace zb {
namespace {

// What the probe's factory last received (test-only state).
nlohmann::json probe_received;

class Probe final : public Strategy {
 public:
  plan::Plan make_plan(const Batch&) const override { return {}; }
};

std::unique_ptr<Strategy> make_probe(const SystemSpec& system, const Scenario&, const CostModel&) {
  probe_received = system.options;
  return std::make_unique<Probe>();
}

std::vector<OptionProblem> check_probe(const nlohmann::json& options, const SystemCheckContext& context) {
  const nlohmann::json& count = options.at("count");
  if (!context.world_size || !count.is_number_integer() || count.get<int>() <= *context.world_size) return {};
  return {{"count", "count exceeds the world size", "at most the world size"}};
}

const StrategyRegistration probe_registration{
    SystemInfo{
        .name = "probe",
        .description = "test-only strategy",
        .order = 1000,
        .baseline = true,
        .options = {SystemOption{.name = "flag",
                                 .type = OptionType::boolean,
                                 .default_value = true,
                                 .choices = {},
                                 .description = "a switch"},
                    SystemOption{.name = "mode",
                                 .type = OptionType::choice,
                                 .default_value = "a",
                                 .choices = {"a", "b"},
                                 .description = "a choice"},
                    SystemOption{.name = "count",
                                 .type = OptionType::positive_int_or_auto,
                                 .default_value = "auto",
                                 .choices = {},
                                 .description = "a number"}},
        .validate = check_probe,
        .label = {},
    },
    make_probe};

Scenario one_node() {
  return test::preset_scenario("dgx-h200", 1, "llama-7b");
}

// The Error make_strategy throws for `system`, or nullopt when it accepts it.
std::optional<Error> make_error(const SystemSpec& system) {
  const Scenario s = one_node();
  const CostModel cost(s.cluster, s.model);
  try {
    (void)make_strategy(system, s, cost);
  } catch (const Error& e) {
    return e;
  }
  return std::nullopt;
}

TEST(StrategyRegistry, ListsEachStrategyOnceInListingOrder) {
  const std::vector<SystemInfo>& catalog = system_catalog();
  std::set<std::string> seen;
  for (const SystemInfo& info : catalog) EXPECT_TRUE(seen.insert(info.name).second) << info.name << " twice";
  EXPECT_EQ(strategy_names(), system_names()) << "every catalog entry has a factory";
  for (std::size_t i = 1; i < catalog.size(); ++i) {
    EXPECT_TRUE(std::pair(catalog[i - 1].order, catalog[i - 1].name) <
                std::pair(catalog[i].order, catalog[i].name))
        << catalog[i - 1].name << " before " << catalog[i].name;
  }
  // Linked whole: the built-in strategies registered alongside the probe, zeppelin first.
  ASSERT_GE(catalog.size(), 2u);
  EXPECT_EQ(catalog.front().name, "zeppelin");
  EXPECT_FALSE(catalog.front().baseline);
  EXPECT_EQ(catalog.back().name, "probe");
}

TEST(StrategyRegistry, EveryOptionDefaultValidatesAgainstItsOwnType) {
  for (const SystemInfo& info : system_catalog()) {
    EXPECT_FALSE(info.description.empty()) << info.name;
    std::set<std::string> names;
    for (const SystemOption& option : info.options) {
      SCOPED_TRACE(info.name + "." + option.name);
      EXPECT_TRUE(names.insert(option.name).second) << "option listed twice";
      EXPECT_FALSE(option.description.empty());
      EXPECT_EQ(check_option_value(option, option.default_value), "");
      if (option.type == OptionType::choice) {
        EXPECT_FALSE(option.choices.empty());
      }
    }
    // A bare name runs at the defaults, so the strategy's own hook must accept them on any cluster.
    for (const std::optional<int> world :
         {std::optional<int>{}, std::optional<int>{1}, std::optional<int>{16}}) {
      EXPECT_TRUE(info.check(info.default_options(), SystemCheckContext{world}).empty()) << info.name;
    }
  }
}

TEST(StrategyRegistry, OptionsReachTheFactoryWithDefaultsFilled) {
  EXPECT_FALSE(make_error(test::system("probe", {{"mode", "b"}})));
  EXPECT_EQ(probe_received, (nlohmann::json{{"flag", true}, {"mode", "b"}, {"count", "auto"}}));
  // Every real strategy too: a factory reads its options without defaults of its own.
  for (const std::string& name : strategy_names()) EXPECT_FALSE(make_error(test::system(name))) << name;
}

TEST(StrategyRegistry, MakeStrategyChecksOptionsLikeTheLoader) {
  const auto expect_error = [](const SystemSpec& system, const std::string& path, const std::string& part) {
    const std::optional<Error> e = make_error(system);
    ASSERT_TRUE(e) << system.label << " was accepted";
    EXPECT_EQ(e->code(), ExitCode::bad_input);
    ASSERT_EQ(e->problems().size(), 1u) << e->what();
    EXPECT_EQ(e->problems()[0].where.json_path, path);
    EXPECT_NE((e->problems()[0].what + " " + e->problems()[0].hint).find(part), std::string::npos)
        << e->what();
  };
  SystemSpec spec = test::system("probe", {{"mood", "b"}});
  spec.label = "p";
  expect_error(spec, "systems.p.mood", "its options: flag, mode, count");
  spec.options = {{"mode", "c"}};
  expect_error(spec, "systems.p.mode", "expected one of \"a\" | \"b\"");
  spec.options = {{"count", 9}};  // one dgx-h200 node: 8 GPUs
  expect_error(spec, "systems.p.count", "count exceeds the world size");
  spec = test::system("uniform-cp", {{"degree", 3}});
  spec.label = "u";
  expect_error(spec, "systems.u.degree", "degree 3 does not divide the world size 8");
}

TEST(StrategyRegistry, UnknownSystemListsTheRegisteredNames) {
  const std::optional<Error> e = make_error(test::system("nosuch"));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code(), ExitCode::bad_input);
  std::string names;
  for (const std::string& name : strategy_names()) names += (names.empty() ? "" : ", ") + name;
  EXPECT_EQ(e->problems().at(0).hint, "known systems: " + names);
  EXPECT_NE(names.find("probe"), std::string::npos);
}

TEST(StrategyRegistry, TheLoaderValidatesARegisteredStrategy) {
  nlohmann::json j = parse_jsonc(test::base_scenario_text, "base.json");
  j["systems"] = {"probe", {{"name", "probe"}, {"mode", "b"}, {"count", 4}}};
  j["gates"] = nlohmann::json::array();
  // This binary links no backend, so none is registered for "backend" to name: the default applies.
  j.erase("backend");
  const Scenario s = parse_scenario(j.dump(), "dir/scenario.json");
  ASSERT_EQ(s.systems.size(), 2u);
  EXPECT_EQ(s.systems[0].options, (nlohmann::json{{"flag", true}, {"mode", "a"}, {"count", "auto"}}));
  EXPECT_EQ(s.systems[1].label, "probe[mode=b,count=4]");

  j["systems"] = {{{"name", "probe"}, {"count", 17}}, {{"name", "probe"}, {"flag", "yes"}}, "prob"};
  try {
    (void)parse_scenario(j.dump(), "dir/scenario.json");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    std::vector<std::string> problems;
    for (const Problem& p : e.problems())
      problems.push_back(p.where.json_path + ": " + p.what + " (" + p.hint + ")");
    ASSERT_EQ(problems.size(), 3u) << e.what();
    EXPECT_EQ(problems[0], "systems[0].count: count exceeds the world size (at most the world size)");
    EXPECT_EQ(problems[1], "systems[1].flag: expected true or false, got a string (\"yes\") (default: true)");
    EXPECT_NE(problems[2].find("did you mean \"probe\"?"), std::string::npos) << problems[2];
  }
}

}  // namespace
}  // namespace zb
