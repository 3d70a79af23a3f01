// The combined table as text (console and Markdown share one TextTable) and HTML; JSON is in
// combined_table_json.cpp.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "reports/atomic_write.hpp"
#include "reports/combined_table.hpp"
#include "reports/html_style.hpp"
#include "reports/number_format.hpp"
#include "reports/svg.hpp"
#include "reports/text_table.hpp"

namespace zb::reports {
namespace {

constexpr const char* long_documents_column = "\u03a3s\u00b2 > GPU / node";

std::string seconds_cell(const std::optional<double>& s) {
  return s ? format_seconds(*s) : "OOM";
}
// An interval's end in three decimals, unless that would print 1.000 for an end that is not 1: an
// interval that excludes 1 must not read as if it reached it.
std::string bound_text(double bound) {
  std::string text = fmt::format("{:.3f}", bound);
  if (text == "1.000" && bound != 1) text = fmt::format("{:.6f}", bound);
  return text;
}

// "1.05× [1.021, 1.078]": the speed-up and its paired 95 % interval; "[n/a]" with fewer than 2 pairs.
std::string speedup_cell(const std::optional<double>& r, const std::optional<RatioInterval>& interval) {
  if (!r) return "n/a";
  if (!interval) return format_ratio(*r) + " [n/a]";
  return fmt::format("{} [{}, {}]", format_ratio(*r), bound_text(interval->low), bound_text(interval->high));
}

std::string speedup_against(const CombinedRow& row, const std::string& baseline) {
  for (std::size_t k = 0; k < row.speedups.size(); ++k) {
    if (row.speedups[k].first != baseline) continue;
    return speedup_cell(row.speedups[k].second,
                        k < row.intervals.size() ? row.intervals[k].second : std::nullopt);
  }
  return "n/a";
}

bool has_baseline(const CombinedRow& row, const std::string& baseline) {
  return std::any_of(row.speedups.begin(), row.speedups.end(),
                     [&](const auto& s) { return s.first == baseline; });
}

bool any_long_documents(const CombinedTable& t) {
  return std::any_of(t.rows.begin(), t.rows.end(),
                     [](const CombinedRow& row) { return row.long_documents.recorded(); });
}

// "78.2 % / 0.0 %": the mean share of Σs² in documents longer than one GPU's / one node's capacity.
std::string long_documents_cell(const LongDocumentRecord& record) {
  if (!record.recorded()) return "\u2014";
  const BatchLongDocuments mean = record.mean();
  return format_percent(mean.above_gpu.attention_work) + " / " +
         format_percent(mean.above_node.attention_work);
}

bool any_layouts(const CombinedTable& t) {
  return std::any_of(t.rows.begin(), t.rows.end(),
                     [](const CombinedRow& row) { return !row.subject_layouts.empty(); });
}

TextTable table_of(const CombinedTable& t) {
  TextTable out;
  const bool layouts = any_layouts(t);
  const bool long_documents = any_long_documents(t);
  auto column = [&](std::string title, Align align) {
    out.header.push_back(std::move(title));
    out.align.push_back(align);
  };
  for (const char* title : {"scenario", "backend", "cluster", "model"}) column(title, Align::left);
  if (long_documents) column(long_documents_column, Align::right);
  column("system", Align::left);
  if (layouts) column("layouts", Align::left);
  column("s/iter", Align::right);
  column("best baseline", Align::left);
  column("its s/iter", Align::right);
  column("vs best", Align::right);
  column("verdict", Align::left);
  for (const std::string& b : t.baseline_columns) column("vs " + b, Align::right);
  column("gates", Align::left);
  for (const CombinedRow& row : t.rows) {
    if (!row.error.empty()) {
      std::vector<std::string> cells{row.scenario, "error: " + row.error};
      cells.resize(out.header.size());
      out.rows.push_back(std::move(cells));
      continue;
    }
    std::vector<std::string> cells{row.scenario,
                                   row.simulated ? row.backend + " (simulated)" : row.backend + " (measured)",
                                   row.cluster, row.model};
    if (long_documents) cells.push_back(long_documents_cell(row.long_documents));
    cells.push_back(row.subject.empty() ? "\u2014" : row.subject);
    if (layouts) cells.push_back(row.subject_layouts.empty() ? "\u2014" : layouts_text(row.subject_layouts));
    for (std::string cell :
         {row.subject.empty() ? "\u2014" : seconds_cell(row.subject_seconds),
          row.best_baseline.value_or("none"), row.best_seconds ? format_seconds(*row.best_seconds) : "\u2014",
          speedup_cell(row.speedup_vs_best, row.interval_vs_best), verdict_of(row)}) {
      cells.push_back(std::move(cell));
    }
    for (const std::string& b : t.baseline_columns) {
      cells.push_back(has_baseline(row, b) ? speedup_against(row, b) : "\u2014");
    }
    cells.push_back(row.gates_passed ? "pass" : "FAIL");
    out.rows.push_back(std::move(cells));
  }
  return out;
}

// The subject of the aggregates: its label when every row has the same, else its strategy when every row
// has the same (the ablation's zeppelin variants), else a generic name.
std::string subject_name(const CombinedTable& t) {
  std::set<std::string> labels, strategies;
  for (const CombinedRow& row : t.rows) {
    if (row.subject.empty()) continue;
    labels.insert(row.subject);
    strategies.insert(row.subject_strategy);
  }
  if (labels.size() == 1) return *labels.begin();
  return strategies.size() == 1 ? *strategies.begin() : "the subject system";
}

std::string aggregate_line(const std::string& what, const RatioAggregates& a) {
  if (a.count == 0) return what + ": no scenario has the figure";
  return fmt::format("{} over {} scenario{}: mean {}, geometric mean {}, median {}, min {} ({}), max {} ({})",
                     what, a.count, a.count == 1 ? "" : "s", format_ratio(a.mean),
                     format_ratio(a.geometric_mean), format_ratio(a.median), format_ratio(a.min),
                     a.min_scenario, format_ratio(a.max), a.max_scenario);
}

// In how many of the rows the difference is significant, by the paired t test of each row.
std::string significance_text(const RatioAggregates& a) {
  if (a.count == 0) return "";
  std::string out =
      fmt::format("; significant (paired t test, p < 0.05): faster in {}, slower in {}, neither in {}",
                  a.significantly_faster, a.significantly_slower, a.not_significant);
  if (a.untested > 0) out += fmt::format(", untested in {} (fewer than 2 iterations)", a.untested);
  return out;
}

// The lines under the table: the aggregates, then where each row's figures came from.
std::vector<std::string> notes_of(const CombinedTable& t) {
  const std::string subject = subject_name(t);
  std::vector<std::string> lines;
  lines.push_back(aggregate_line(subject + " vs the best baseline", t.versus_best) +
                  fmt::format("; wins {}, ties {} (within \u00b10.5 %), loses {}", t.wins, t.ties, t.losses) +
                  significance_text(t.versus_best));
  for (const auto& [baseline, a] : t.versus_baseline)
    lines.push_back(aggregate_line(subject + " vs " + baseline, a) + significance_text(a));
  const bool any_speedup =
      t.versus_best.count > 0 || std::any_of(t.versus_baseline.begin(), t.versus_baseline.end(),
                                             [](const auto& v) { return v.second.count > 0; });
  if (any_speedup)
    lines.push_back(
        "x\u00d7 [low, high]: the speed-up (ratio of mean iteration times) and the 95 % interval of the "
        "per-batch "
        "speed-up from the paired t test over the iterations (iteration i of both systems ran the same "
        "batch); "
        "[n/a] with fewer than 2 iterations (docs/METRICS.md, \"Combined table\")");
  if (!t.subject_layouts.empty()) {
    int iterations = 0;
    for (const LayoutCount& c : t.subject_layouts) iterations += c.iterations;
    lines.push_back(fmt::format("layouts {} ran, over {} iterations: {}", subject, iterations,
                                layouts_text(t.subject_layouts)));
  }
  if (any_long_documents(t)) {
    lines.push_back(
        std::string(long_documents_column) +
        ": the share of the attention work \u03a3s\u00b2 in documents longer than one GPU's / one "
        "node's token capacity, mean over the scenario's batches (docs/METRICS.md, \"Long "
        "documents\"; each report.json has the shares of documents and tokens too)");
  }
  std::set<std::string> profiles;
  for (const CombinedRow& row : t.rows) {
    if (row.error.empty()) profiles.insert(row.hardware_profile);
  }
  for (const std::string& p : profiles) lines.push_back(p);
  return lines;
}

}  // namespace

std::string combined_text(const CombinedTable& t) {
  std::string out = fmt::format("combined table: {} ({} scenario{})\n\n", t.title, t.rows.size(),
                                t.rows.size() == 1 ? "" : "s");
  out += render_text(table_of(t), "  ") + "\n";
  for (const std::string& line : notes_of(t)) out += line + "\n";
  return out;
}

std::string combined_markdown(const CombinedTable& t) {
  std::string out = fmt::format("# Combined table: {}\n\n", t.title);
  out += render_markdown(table_of(t)) + "\n";
  for (const std::string& line : notes_of(t)) out += "- " + line + "\n";
  return out;
}

std::string combined_html(const CombinedTable& t) {
  const TextTable table = table_of(t);
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  out += fmt::format("<title>{}</title><style>{}</style></head><body><main>",
                     html_escape("combined table: " + t.title), html_report_style);
  out += fmt::format(
      R"(<header class="verdict"><h1>{}</h1><p class="description">{} scenario{}, one row each; every figure from that scenario's report</p></header>)",
      html_escape(t.title), t.rows.size(), t.rows.size() == 1 ? "" : "s");
  out += R"(<section><div class="table-scroll"><table><thead><tr>)";
  for (std::size_t c = 0; c < table.header.size(); ++c) {
    out += fmt::format(R"(<th{}>{}</th>)", table.align[c] == Align::left ? R"( class="text")" : "",
                       html_escape(table.header[c]));
  }
  out += "</tr></thead><tbody>";
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    out += "<tr>";
    for (std::size_t c = 0; c < table.rows[r].size(); ++c) {
      const std::string& cell = table.rows[r][c];
      std::string cls = table.align[c] == Align::left ? "text" : "";
      if (cell == "loses" || cell == "FAIL" || cell == "OOM" || cell.starts_with("error: ")) cls += " oom";
      out += fmt::format(R"(<td{}>{}</td>)", cls.empty() ? "" : " class=\"" + cls + "\"", html_escape(cell));
    }
    out += "</tr>";
  }
  out += "</tbody></table></div><ul class=\"options\">";
  for (const std::string& line : notes_of(t)) out += "<li>" + html_escape(line) + "</li>";
  out += "</ul></section><footer>zeppelin-bench combined table</footer></main></body></html>\n";
  return out;
}

std::vector<std::filesystem::path> write_combined_table(const CombinedTable& t,
                                                        const std::filesystem::path& directory) {
  const std::vector<std::pair<std::string, std::string>> files{
      {"combined.json", combined_json(t).dump(2) + "\n"},
      {"combined.md", combined_markdown(t)},
      {"combined.html", combined_html(t)}};
  std::vector<std::filesystem::path> written;
  for (const auto& [name, content] : files) {
    write_file_atomically(directory / name, content);
    written.push_back(directory / name);
  }
  return written;
}

}  // namespace zb::reports
