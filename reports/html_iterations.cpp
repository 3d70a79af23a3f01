// The HTML report's table of iterations: one row per iteration with the layout each system's plan ran,
// for the systems whose plans record one (reports/layouts.hpp).
#include <algorithm>

#include <fmt/format.h>

#include "reports/html_charts.hpp"
#include "reports/svg.hpp"

namespace zb::reports {

std::string iterations_table(const RunSummary& summary) {
  std::vector<const SystemSummary*> with_layouts;
  for (const SystemSummary& s : summary.systems) {
    if (std::any_of(s.layout_per_iteration.begin(), s.layout_per_iteration.end(),
                    [](const std::string& layout) { return !layout.empty(); })) {
      with_layouts.push_back(&s);
    }
  }
  if (with_layouts.empty()) return "";
  std::string out = "<table><thead><tr><th>iteration</th>";
  for (const SystemSummary* s : with_layouts)
    out += fmt::format(R"(<th class="text">{} layout</th>)", html_escape(s->label));
  out += "</tr></thead><tbody>";
  for (int i = 0; i < summary.iterations; ++i) {
    out += fmt::format("<tr><td>{}</td>", i);
    for (const SystemSummary* s : with_layouts) {
      const auto k = static_cast<std::size_t>(i);
      const std::string layout = k < s->layout_per_iteration.size() ? s->layout_per_iteration[k] : "";
      out += fmt::format(R"(<td class="text">{}</td>)", layout.empty() ? "&#8212;" : html_escape(layout));
    }
    out += "</tr>";
  }
  return out + "</tbody></table>";
}

}  // namespace zb::reports
