// The HTML report's table of iterations: one row per iteration with its batch (documents, tokens, the
// longest document and the shares in documents longer than one GPU's and one node's token capacity,
// core/metrics/long_documents.hpp) and the layout each system's plan ran, for the systems whose plans
// record one (reports/layouts.hpp).
#include <algorithm>

#include <fmt/format.h>

#include "reports/html_charts.hpp"
#include "reports/number_format.hpp"
#include "reports/svg.hpp"

namespace zb::reports {
namespace {

std::vector<const SystemSummary*> systems_with_layouts(const RunSummary& summary) {
  std::vector<const SystemSummary*> out;
  for (const SystemSummary& s : summary.systems) {
    if (std::any_of(s.layout_per_iteration.begin(), s.layout_per_iteration.end(),
                    [](const std::string& layout) { return !layout.empty(); })) {
      out.push_back(&s);
    }
  }
  return out;
}

const BatchLongDocuments* long_documents_of(const LongDocumentRecord& record, int iteration) {
  for (const BatchLongDocuments& batch : record.iterations) {
    if (batch.iteration == iteration) return &batch;
  }
  return nullptr;
}

std::string shares_cells(const LongDocumentShares* shares) {
  if (shares == nullptr) return "<td>&#8212;</td><td>&#8212;</td><td>&#8212;</td>";
  return fmt::format("<td>{}</td><td>{}</td><td>{}</td>", format_percent(shares->documents),
                     format_percent(shares->tokens), format_percent(shares->attention_work));
}

}  // namespace

std::string iterations_table(const RunResult& run, const RunSummary& summary) {
  const std::vector<const SystemSummary*> with_layouts = systems_with_layouts(summary);
  const LongDocumentRecord& record = summary.long_documents;
  std::string out = "<table><thead><tr><th>iteration</th><th>documents</th><th>tokens</th><th>longest</th>";
  for (const char* level : {"GPU", "node"}) {
    out += fmt::format(
        "<th>&gt; {0}: documents</th><th>&gt; {0}: tokens</th><th>&gt; {0}: &#931;s&#178;</th>", level);
  }
  for (const SystemSummary* s : with_layouts)
    out += fmt::format(R"(<th class="text">{} layout</th>)", html_escape(s->label));
  out += "</tr></thead><tbody>";
  for (const BatchSummary& batch : run.workload.batches) {
    out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td>", batch.iteration, batch.documents,
                       format_si(static_cast<double>(batch.tokens)), batch.longest);
    const BatchLongDocuments* shares = long_documents_of(record, batch.iteration);
    out += shares_cells(shares != nullptr ? &shares->above_gpu : nullptr);
    out += shares_cells(shares != nullptr ? &shares->above_node : nullptr);
    for (const SystemSummary* s : with_layouts) {
      const auto k = static_cast<std::size_t>(batch.iteration);
      const std::string layout = k < s->layout_per_iteration.size() ? s->layout_per_iteration[k] : "";
      out += fmt::format(R"(<td class="text">{}</td>)", layout.empty() ? "&#8212;" : html_escape(layout));
    }
    out += "</tr>";
  }
  out = scroll_x(out + "</tbody></table>");
  if (record.recorded()) {
    out += fmt::format(R"(<p class="note">Capacities: one GPU {} tokens, one node {} tokens.</p>)",
                       record.gpu_capacity_tokens, record.node_capacity_tokens);
  }
  return out;
}

}  // namespace zb::reports
