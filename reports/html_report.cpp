#include "reports/html_report.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "reports/atomic_write.hpp"
#include "reports/best_baseline.hpp"
#include "reports/console.hpp"
#include "reports/html_charts.hpp"
#include "reports/html_style.hpp"
#include "reports/long_documents_report.hpp"
#include "reports/number_format.hpp"
#include "reports/profile_report.hpp"
#include "reports/simulation_statement.hpp"
#include "reports/svg.hpp"

namespace zb::reports {
namespace {

std::string verdict_badges(const RunSummary& summary) {
  std::string out = R"(<div class="badges">)";
  const auto failed = std::count_if(summary.gates.begin(), summary.gates.end(),
                                    [](const GateResult& g) { return !g.passed; });
  if (summary.gates.empty()) {
    out += R"(<span class="badge neutral">no gates</span>)";
  } else if (failed == 0) {
    out += fmt::format(R"(<span class="badge pass">PASS &#8212; all {} gate{} passed</span>)",
                       summary.gates.size(), summary.gates.size() == 1 ? "" : "s");
  } else {
    out += fmt::format(R"(<span class="badge fail">FAIL &#8212; {} of {} gates failed</span>)", failed,
                       summary.gates.size());
  }
  if (summary.simulated) {
    out += fmt::format(
        R"(<span class="badge sim">SIMULATED{}</span>)",
        summary.simulator_version.empty() ? "" : " &#8212; " + html_escape(summary.simulator_version));
  } else {
    out += fmt::format(R"(<span class="badge neutral">backend: {}</span>)", html_escape(summary.backend));
  }
  return out + "</div>";
}

// The headline: the best baseline, then every other system against it. A loss (slower, or out of
// memory) is set in the failure colour, as plainly as a win.
std::string headline_html(const RunSummary& summary) {
  const std::string best = best_baseline_statement(summary);
  if (best.empty()) return "";
  std::string out = R"(<div class="headline">)";
  for (const SystemSummary& s : summary.systems) {
    const std::string line = versus_best_statement(summary, s);
    if (line.empty()) continue;
    const bool lost = !s.speedup_vs_best || *s.speedup_vs_best < 1;
    out += fmt::format(R"(<p class="versus{}">{}</p>)", lost ? " lost" : "", html_escape(line));
  }
  return out + fmt::format(R"(<p class="best-baseline">{}</p></div>)", html_escape(best));
}

std::string header_html(const RunResult& run, const RunSummary& summary, const RunContext& context) {
  std::string out = R"(<header class="verdict">)";
  out += fmt::format("<h1>{}</h1>", html_escape(summary.scenario));
  if (!run.scenario.description.empty())
    out += fmt::format(R"(<p class="description">{}</p>)", html_escape(run.scenario.description));
  out += verdict_badges(summary);
  out += headline_html(summary);
  out += fmt::format("<div>{}</div>", html_escape(backend_statement(summary)));
  out += fmt::format(R"(<div class="profile">{}</div>)", html_escape(summary.hardware_profile));
  if (const std::string line = long_documents_statement(summary.long_documents); !line.empty())
    out += fmt::format(R"(<div class="profile">{}</div>)", html_escape(line));
  const int iterations = summary.systems.empty() ? 0 : summary.systems.front().iterations;
  out += fmt::format(
      R"(<p class="facts"><span>{}</span><span>{}</span><span>{} iteration{}</span><span>{}</span><span>{} tokens per iteration</span><span>zeppelin-bench {} (git {})</span><span>{}</span></p>)",
      html_escape(summary.cluster), html_escape(summary.model), iterations, iterations == 1 ? "" : "s",
      to_string(run.scenario.passes),
      format_si(static_cast<double>(run.scenario.workload.tokens_per_iteration)),
      html_escape(context.tool_version), html_escape(context.git_sha + (context.git_dirty ? ", dirty" : "")),
      html_escape(context.date_utc));
  return out + "</header>";
}

std::string speedup_cell(const SystemSummary& s, const SystemSummary& baseline,
                         std::optional<double> speedup) {
  return fmt::format("<td>{}</td>", &baseline == &s ? "&#8212;" : speedup ? format_ratio(*speedup) : "n/a");
}

// A system's label in a column header, escaped, with a line-break opportunity after each '[' and ',' of
// its options ("ring-cp[degree=8]"), so a narrow column can wrap it instead of widening the table.
std::string header_label(const std::string& label) {
  std::string out;
  for (const char c : html_escape(label)) {
    out += c;
    if (c == '[' || c == ',') out += "<wbr>";
  }
  return out;
}

// A figure whose own spaces never break ("6.79 s"), so a squeezed cell of two figures ("6.79 s ± 235 ms",
// "12.0 % / 31.0 %") wraps only between them.
std::string unbroken(const std::string& figure) {
  std::string out;
  for (const char c : figure) out += c == ' ' ? std::string("&#160;") : std::string(1, c);
  return out;
}

// " (0.4 %)": the mean planner share of the predicted iteration after the planner's time, marked where it is
// above the rule's limit (docs/METRICS.md, "planner share"); empty when no iteration fitted.
std::string planner_share_text(const SystemSummary& s) {
  const SampleAggregates& share = s.aggregates(metric::planner_share);
  if (share.count == 0) return {};
  if (share.mean <= planner_share_limit) return "&#160;(" + unbroken(format_share(share.mean)) + ")";
  return "&#160;(<strong>" + unbroken(format_share(share.mean)) + "</strong>, over " +
         unbroken(format_share(planner_share_limit)) + ")";
}

// Speed-up columns as the console has them: vs the best baseline, then every baseline strongest first.
// The table should fit a desktop's width with every column in sight: the system cell, the headers and the
// cells of two figures may wrap (class "text" and "pair"), so the browser narrows them before it scrolls.
std::string summary_table(const RunSummary& summary) {
  std::vector<const SystemSummary*> baselines;
  for (const std::string& label : summary.baseline_ranking) baselines.push_back(summary.find(label));
  const SystemSummary* best_baseline = summary.best_baseline ? summary.find(*summary.best_baseline) : nullptr;
  const std::size_t speedup_columns = baselines.size() + (best_baseline != nullptr ? 1 : 0);
  double fastest = 0;
  for (const SystemSummary& s : summary.systems) {
    if (s.feasible() && (fastest == 0 || s.aggregates(metric::iteration_seconds).mean < fastest))
      fastest = s.aggregates(metric::iteration_seconds).mean;
  }
  std::string out =
      "<table><thead><tr><th>system</th><th>iteration time</th><th>tokens/s</th><th>TFLOP/s per "
      "GPU</th><th>MFU</th>";
  if (best_baseline != nullptr) {
    out += fmt::format("<th>vs best ({})</th>", header_label(best_baseline->label));
  }
  for (const SystemSummary* b : baselines) out += fmt::format("<th>vs {}</th>", header_label(b->label));
  out +=
      "<th>attention imbalance</th><th>NIC util. mean / max</th><th>NVLink util. mean / max</th><th>planner "
      "time</th></tr></thead><tbody>";
  for (const SystemSummary& s : summary.systems) {
    const std::string strategy =
        s.strategy == s.label ? "" : fmt::format(" <code>{}</code>", html_escape(s.strategy));
    const std::string layouts = s.layouts.empty() ? ""
                                                  : fmt::format(R"(<div class="layouts">layouts: {}</div>)",
                                                                html_escape(layouts_text(s.layouts)));
    // The label never breaks at its hyphens ("ring-cp[degree=8]"); the strategy and layouts wrap under it.
    out += fmt::format(
        R"(<tr><td class="system"><span class="label"><span class="swatch" style="background:{}"></span>{}</span>{}{}</td>)",
        system_colour(s.index), html_escape(s.label), strategy, layouts);
    if (!s.feasible()) {
      out += fmt::format(R"(<td class="oom" colspan="{}">out of memory in all {} iterations</td></tr>)",
                         8 + speedup_columns, s.iterations);
      continue;
    }
    const bool best = s.aggregates(metric::iteration_seconds).mean == fastest;
    out += fmt::format(
        R"(<td class="pair{}">{} &#177;&#160;{}</td><td>{}</td><td>{:.1f}</td><td>{}</td>)",
        best ? " best" : "", unbroken(format_seconds(s.aggregates(metric::iteration_seconds).mean)),
        unbroken(format_seconds(s.aggregates(metric::iteration_seconds).sd)),
        format_si(s.aggregates(metric::tokens_per_second).mean),
        s.aggregates(metric::model_tflops_per_gpu).mean, format_percent(s.aggregates(metric::mfu).mean));
    if (best_baseline != nullptr) out += speedup_cell(s, *best_baseline, s.speedup_vs_best);
    for (const SystemSummary* b : baselines) out += speedup_cell(s, *b, summary.speedup(s.label, b->label));
    const std::string nvlink =
        s.aggregates(metric::nvlink_utilization_mean).count > 0
            ? unbroken(format_percent(s.aggregates(metric::nvlink_utilization_mean).mean)) + "&#160;/ " +
                  unbroken(format_percent(s.aggregates(metric::nvlink_utilization_max).mean))
            : "n/a";
    out += fmt::format(
        R"(<td>{:.2f}</td><td class="pair">{}&#160;/ {}</td><td class="pair">{}</td><td>{}{}</td></tr>)",
        s.aggregates(metric::attention_imbalance).mean,
        unbroken(format_percent(s.aggregates(metric::nic_utilization_mean).mean)),
        unbroken(format_percent(s.aggregates(metric::nic_utilization_max).mean)), nvlink,
        format_seconds(s.aggregates(metric::planner_seconds).mean) + planner_share_text(s),
        s.feasible_iterations < s.iterations ? fmt::format(" ({} OOM)", s.iterations - s.feasible_iterations)
                                             : "");
  }
  return out + "</tbody></table>";
}

// What each system ran with, "auto" resolved: which configuration of every baseline was compared.
std::string options_list(const RunSummary& summary) {
  std::string out = R"(<p class="options-title">Options as run</p><ul class="options">)";
  for (const SystemSummary& s : summary.systems) {
    out += fmt::format("<li><strong>{}</strong>: {}</li>", html_escape(s.label),
                       s.resolved_options_text.empty() ? "(none)" : html_escape(s.resolved_options_text));
  }
  return out + "</ul>";
}

// The gate and its reason wrap (class "text"), so on a phone the table fits the screen's width.
std::string gates_table(const RunSummary& summary) {
  if (summary.gates.empty()) return R"(<p class="note">The scenario defines no gates.</p>)";
  std::string out =
      "<table><thead><tr><th class=\"text\">gate</th><th>observed</th><th>result</th><th "
      "class=\"text\">reason</th></tr></thead><tbody>";
  for (const GateResult& g : summary.gates) {
    out += fmt::format(
        R"(<tr class="gate {}"><td class="text">{}</td><td>{}</td><td class="result">{}</td><td class="text">{}</td></tr>)",
        g.passed ? "pass" : "fail", html_escape(g.description),
        g.observed ? fmt::format("{:.4g}", *g.observed) : "&#8212;", g.passed ? "PASS" : "FAIL",
        html_escape(g.reason));
  }
  return out + "</tbody></table>";
}

std::string section(const std::string& title, const std::string& lead, const std::string& body) {
  return fmt::format(R"(<section><h2>{}</h2><p class="lead">{}</p>{}</section>)", title, lead, body);
}

// One sub-chart per system that has a trace, under an <h3> naming the system.
template <typename Chart>
std::string per_system(const RunResult& run, const RunSummary& summary, Chart chart, bool two_columns) {
  std::string out = two_columns ? R"(<div class="grid2">)" : "<div>";
  for (std::size_t i = 0; i < run.systems.size() && i < summary.systems.size(); ++i) {
    const SystemSummary& s = summary.systems[i];
    out += fmt::format(R"(<div><h3><span class="swatch" style="background:{}"></span>{}</h3>)",
                       system_colour(s.index), html_escape(s.label));
    out += run.systems[i].has_trace ? chart(s, run.systems[i].first_trace)
                                    : std::string(R"(<p class="note">Out of memory: no trace.</p>)");
    out += "</div>";
  }
  return out + "</div>";
}

std::string problems_section(const RunSummary& summary) {
  std::string items;
  for (const SystemSummary& s : summary.systems) {
    for (const std::string& line : s.oom)
      items += fmt::format("<li>{}: OOM, {}</li>", html_escape(s.label), html_escape(line));
    for (const std::string& line : s.verification)
      items += fmt::format("<li>{}: plan verification, {}</li>", html_escape(s.label), html_escape(line));
  }
  if (items.empty()) return "";
  return section("Problems", "Out-of-memory reports and plan verification problems.",
                 R"(<ul class="problems">)" + items + "</ul>");
}

}  // namespace

std::string html_report(const RunResult& run, const RunSummary& summary, const RunContext& context) {
  std::string page = R"(<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">)";
  page += R"(<meta name="viewport" content="width=device-width, initial-scale=1">)";
  page += fmt::format("<title>zeppelin-bench: {}</title><style>{}</style></head><body><main>",
                      html_escape(summary.scenario), html_report_style);
  page += header_html(run, summary, context);
  page += section(
      "Summary",
      "Mean over feasible iterations. Speed-up = baseline mean iteration time / system mean iteration time.",
      scroll_x(summary_table(summary)) + options_list(summary));
  page +=
      section("Iterations",
              "Each iteration's batch: its documents, tokens and longest document, and the shares of its "
              "documents, tokens and attention work (\u03a3s\u00b2) in documents longer than one GPU's and "
              "one node's token capacity (docs/METRICS.md, \"Long documents\"); then the layout each "
              "system's plan ran, for the systems whose plans record it.",
              iterations_table(run, summary));
  page +=
      section("Gates", "Pass/fail checks from the scenario; any failure makes <code>run</code> exit with 1.",
              scroll_x(gates_table(summary)));
  if (const std::vector<std::string> lines = simulation_statements(summary); !lines.empty()) {
    std::string list = "<ul>";
    for (std::size_t i = 1; i < lines.size(); ++i) list += "<li>" + html_escape(lines[i]) + "</li>";
    page += section("Simulator against this measurement", html_escape(lines.front()), list + "</ul>");
  }
  page += section(
      "Where the time goes",
      "Critical (slowest) rank, mean per iteration; inside the layers each instant counted once: compute, "
      "then remap, then waiting on a transfer, else idle; then the parts outside the layers: embedding, LM "
      "head and loss, the gradient synchronisation the compute waits for, the optimizer step.",
      breakdown_chart(summary));
  // One scale for every system's GPU load, so bars compare at a glance. Timelines keep their own time
  // axis: systems can differ several-fold in layer time, and a shared axis would squash the fast ones.
  double busiest_gpu = 0;
  for (const SystemResult& system : run.systems) {
    if (!system.has_trace) continue;
    busiest_gpu = std::max(busiest_gpu, busiest_gpu_compute_seconds(system.first_trace));
  }
  page += section(
      "Per-GPU load",
      "Compute-stream time per GPU in the first feasible iteration (same scale for every system); a balanced "
      "plan has level bars.",
      per_system(
          run, summary,
          [&](const SystemSummary& s, const Trace& t) { return gpu_load_chart(s, t, busiest_gpu); }, true));
  page += section("NIC utilisation over time",
                  "Bytes through each NIC per time bin / NIC bandwidth, first feasible iteration.",
                  per_system(run, summary, nic_utilization_chart, false));
  page +=
      section("NVLink utilisation per GPU",
              "Bytes each GPU sent (transmit) and received over NVLink in the layers / (NVLink bandwidth per "
              "direction \u00b7 time in the layers), mean over feasible iterations; tensor-parallel "
              "collectives, intra-node ring steps, remaps and routed transfers' dispatch and combine legs.",
              per_system(
                  run, summary,
                  [](const SystemSummary& s, const Trace&) { return nvlink_utilization_chart(s); }, false));
  page += section("Document lengths", "Every document of every iteration's batch.",
                  length_histogram_chart(run.workload));
  page += section(
      "Timeline",
      fmt::format("Ranks 0\u2013{} of the first feasible iteration: one representative layer, forward then "
                  "backward, each system on its own time axis. Hover for details.",
                  timeline_ranks - 1),
      per_system(
          run, summary, [](const SystemSummary& s, const Trace& t) { return timeline_chart(s, t); }, false));
  page += section("Hardware profile",
                  "Every constant of the cost model this run used (docs/METRICS.md, \"Constants\"); changed "
                  "rows differ from the defaults.",
                  scroll_x(profile_table_html(run.scenario.hardware_profile)));
  page += problems_section(summary);
  page += R"(<footer>Generated by zeppelin-bench. Definitions of every figure: docs/METRICS.md. )"
          R"(Open the trace-*.json files in ui.perfetto.dev for the full timeline.</footer>)";
  page += "</main></body></html>\n";
  return page;
}

void write_html_report(const RunResult& run, const RunSummary& summary, const RunContext& context,
                       const std::filesystem::path& path) {
  write_file_atomically(path, html_report(run, summary, context));
}

}  // namespace zb::reports
