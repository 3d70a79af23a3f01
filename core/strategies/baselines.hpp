#pragma once
// Factories of the individual strategies; make_strategy (registry.cpp) dispatches on the name.
#include <memory>

#include "core/strategies/strategy.hpp"

namespace zb {

std::unique_ptr<Strategy> make_ring_cp(const SystemSpec& system, const Scenario& scenario, const CostModel& cost);
std::unique_ptr<Strategy> make_uniform_cp(const SystemSpec& system, const Scenario& scenario, const CostModel& cost);
std::unique_ptr<Strategy> make_zeppelin(const SystemSpec& system, const Scenario& scenario, const CostModel& cost);

}  // namespace zb
