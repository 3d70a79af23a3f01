#include "reports/layouts.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace zb::reports {
namespace {

// Most iterations first; a stable sort keeps the order of first appearance among equal counts.
std::vector<LayoutCount> by_count(std::vector<LayoutCount> counts) {
  std::stable_sort(counts.begin(), counts.end(),
                   [](const LayoutCount& a, const LayoutCount& b) { return a.iterations > b.iterations; });
  return counts;
}

void add(std::vector<LayoutCount>& counts, const std::string& layout, int iterations) {
  const auto it =
      std::find_if(counts.begin(), counts.end(), [&](const LayoutCount& c) { return c.layout == layout; });
  if (it == counts.end()) {
    counts.push_back({layout, iterations});
  } else {
    it->iterations += iterations;
  }
}

}  // namespace

std::optional<std::string> iteration_layout(const nlohmann::json& plan_info) {
  if (!plan_info.is_object()) return std::nullopt;
  const auto it = plan_info.find("layout");
  if (it == plan_info.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

std::vector<std::string> layout_per_iteration(const SystemResult& result) {
  std::vector<std::string> out;
  for (const IterationResult& it : result.iterations) {
    if (it.iteration < 0) continue;
    const auto k = static_cast<std::size_t>(it.iteration);
    if (out.size() <= k) out.resize(k + 1);
    out[k] = iteration_layout(it.plan_info).value_or("");
  }
  return out;
}

std::vector<LayoutCount> count_layouts(const SystemResult& result) {
  std::vector<LayoutCount> counts;
  for (const IterationResult& it : result.iterations) {
    if (!it.feasible) continue;
    if (const std::optional<std::string> layout = iteration_layout(it.plan_info)) add(counts, *layout, 1);
  }
  return by_count(std::move(counts));
}

std::vector<LayoutCount> merge_layouts(const std::vector<std::vector<LayoutCount>>& counts) {
  std::vector<LayoutCount> merged;
  for (const std::vector<LayoutCount>& one : counts) {
    for (const LayoutCount& c : one) add(merged, c.layout, c.iterations);
  }
  return by_count(std::move(merged));
}

std::string layouts_text(const std::vector<LayoutCount>& layouts) {
  std::string out;
  for (const LayoutCount& c : layouts)
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", c.layout, c.iterations);
  return out;
}

nlohmann::ordered_json layouts_json(const std::vector<LayoutCount>& layouts) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const LayoutCount& c : layouts) out[c.layout] = c.iterations;
  return out;
}

}  // namespace zb::reports
