#pragma once
// How a strategy joins the tool: one namespace-scope object in the strategy's own file,
//
//   const StrategyRegistration registration{
//       SystemInfo{.name = "my-cp", .description = "...", .order = 40, .baseline = true, .options = {...}},
//       make_my_cp};
//
// registers its schema in the system catalog (core/config/system_catalog.hpp: the loader's validation
// and defaults, `list systems`, the reports' baseline flag) and its factory for make_strategy. The file
// goes in zb_strategy_set (core/strategies/CMakeLists.txt), which every binary links whole so that
// these objects, referenced by no symbol, are not dropped by the linker.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/config/system_catalog.hpp"
#include "core/strategies/strategy.hpp"

namespace zb {

// Builds the strategy for one "systems" entry. `system.options` holds every option of the strategy,
// type-checked, with defaults filled in and the validation hook passed, so a factory repeats no default.
using StrategyFactory = std::unique_ptr<Strategy> (*)(const SystemSpec& system, const Scenario& scenario,
                                                      const CostModel& cost);

class StrategyRegistration {
 public:
  // Registers at static initialisation; aborts on a duplicate name (see register_system).
  StrategyRegistration(SystemInfo info, StrategyFactory factory);
};

// The factory registered under `name`; nullptr when none.
[[nodiscard]] StrategyFactory find_strategy_factory(std::string_view name);

}  // namespace zb
