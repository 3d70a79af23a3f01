#include "reports/console.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "reports/best_baseline.hpp"
#include "reports/console_table.hpp"
#include "reports/long_documents_report.hpp"
#include "reports/number_format.hpp"
#include "reports/simulation_statement.hpp"
#include "reports/terminal_text.hpp"
#include "reports/text_table.hpp"
#include "reports/text_wrap.hpp"

namespace zb::reports {
namespace {

// Who the best baseline is, then each other system against it in words, slower ones included.
std::string best_baseline_text(const RunSummary& summary) {
  const std::string best = best_baseline_statement(summary);
  if (best.empty()) return "";
  std::string out = best + "\n";
  for (const SystemSummary& s : summary.systems) {
    if (const std::string line = versus_best_statement(summary, s); !line.empty()) out += line + "\n";
  }
  return out + "\n";
}

// What each system ran with, "auto" resolved: the configuration of each baseline that was compared.
std::string options_text(const RunSummary& summary) {
  std::string out = "options as run:\n";
  for (const SystemSummary& s : summary.systems) {
    out += fmt::format("  {}: {}\n", s.label,
                       s.resolved_options_text.empty() ? "(none)" : s.resolved_options_text);
  }
  return out + "\n";
}

// Per system whose plans record their layout, how many iterations ran each (reports/layouts.hpp).
std::string layouts_block(const RunSummary& summary) {
  std::string out;
  for (const SystemSummary& s : summary.systems) {
    if (!s.layouts.empty()) out += fmt::format("  {}: {}\n", s.label, layouts_text(s.layouts));
  }
  return out.empty() ? out : "layouts run (iterations each):\n" + out + "\n";
}

// Per system, what the iteration spends outside the layers (docs/METRICS.md, "The whole iteration"):
// means over feasible iterations of the critical rank's parts.
std::string iteration_parts_text(const RunSummary& summary) {
  std::string out;
  for (const SystemSummary& s : summary.systems) {
    if (s.per_iteration.empty()) continue;
    double layers = 0, sync = 0;
    for (const RunMetrics& m : s.per_iteration) {
      layers += m.layers_seconds;
      sync += m.gradient_sync_seconds;
    }
    const auto n = static_cast<double>(s.per_iteration.size());
    out += fmt::format(
        "  {}: layers {}, embedding + LM head + loss {}, gradient sync exposed {} (of {}), optimizer {}\n",
        s.label, format_seconds(layers / n), format_seconds(s.critical_rank.embedding_and_head),
        format_seconds(s.critical_rank.gradient_sync_exposed), format_seconds(sync / n),
        format_seconds(s.critical_rank.optimizer));
  }
  return out.empty() ? out : "iteration outside the layers (critical rank):\n" + out + "\n";
}

// Per system of an MoE run, its MoE layer (docs/METRICS.md, "The MoE layer"): means over feasible
// iterations of the router's imbalance in the representative layer, the dispatch bytes and their share
// between nodes, and the critical rank's share of layer time inside the MoE layer.
std::string moe_layer_text(const RunSummary& summary) {
  std::string out;
  for (const SystemSummary& s : summary.systems) {
    double experts = 0, ranks = 0, dispatch = 0, between = 0, share = 0, n = 0;
    for (const RunMetrics& m : s.per_iteration) {
      if (!m.moe_recorded()) continue;
      experts += m.expert_load_imbalance;
      ranks += m.expert_rank_imbalance;
      dispatch += m.moe_dispatch_bytes;
      between += m.moe_dispatch_nic_bytes;
      share += m.moe_share;
      ++n;
    }
    if (n == 0) continue;
    out += fmt::format(
        "  {}: expert imbalance {:.2f}, rank imbalance {:.2f}, dispatch {} per iteration ({} between "
        "nodes), {} of the layers' time\n",
        s.label, experts / n, ranks / n, format_si(dispatch / n) + "B",
        format_percent(dispatch > 0 ? between / dispatch : 0.0), format_percent(share / n));
  }
  return out.empty() ? out
                     : "MoE layer (router's choices, representative layer; critical rank):\n" + out + "\n";
}

std::string gates_text(const RunSummary& summary) {
  if (summary.gates.empty()) return "gates: none in the scenario\n";
  std::string out = "gates:\n";
  for (const GateResult& g : summary.gates) {
    const std::string observed = g.observed ? fmt::format("observed {:.4g}", *g.observed) : "no value";
    out += fmt::format("  {}  {}  ({})", g.passed ? "PASS" : "FAIL", g.description, observed);
    if (!g.passed) out += ": " + g.reason;
    out += "\n";
  }
  const std::size_t failed = static_cast<std::size_t>(std::count_if(
      summary.gates.begin(), summary.gates.end(), [](const GateResult& g) { return !g.passed; }));
  out += failed == 0 ? "all gates passed\n"
                     : fmt::format("{} of {} gates FAILED (exit 1)\n", failed, summary.gates.size());
  return out;
}

// A copy of the summary with every string the console could show passed through terminal_field: the
// scenario's names, labels, options and the GPU or preset names in `cluster` are user-supplied, and a
// newline or escape sequence in one of them must not print a line of its own. The same function maps
// every occurrence of a label, so lookups by label (find, speedup) still match.
RunSummary for_console(const RunSummary& summary) {
  RunSummary safe = summary;
  auto clean = [](std::string& text) { text = terminal_field(text); };
  for (std::string* text : {&safe.scenario, &safe.backend, &safe.simulator_version, &safe.backend_note,
                            &safe.model, &safe.cluster, &safe.hardware_profile}) {
    clean(*text);
  }
  for (SystemSummary& s : safe.systems) {
    for (std::string* text : {&s.label, &s.strategy, &s.resolved_options_text, &s.stand_in}) clean(*text);
    for (std::string& line : s.oom) clean(line);
    for (std::string& line : s.verification) clean(line);
    for (LayoutCount& c : s.layouts) clean(c.layout);
  }
  for (std::string& label : safe.baseline_ranking) clean(label);
  if (safe.best_baseline) clean(*safe.best_baseline);
  for (Speedup& speedup : safe.speedups) {
    clean(speedup.system);
    clean(speedup.baseline);
  }
  for (GateResult& g : safe.gates) {
    for (std::string* text :
         {&g.description, &g.baseline, &g.reason, &g.gate.metric, &g.gate.system, &g.gate.baseline})
      clean(*text);
  }
  return safe;
}

}  // namespace

std::string backend_statement(const RunSummary& summary) {
  std::string out = "backend: " + summary.backend;
  if (!summary.backend_note.empty()) out += " (" + summary.backend_note + ")";
  if (summary.simulated) return out + " \u2014 figures are SIMULATED, not measured";
  // A measured backend on which no system ran an iteration measured nothing (the run exits 3).
  const bool anything_ran = std::any_of(summary.systems.begin(), summary.systems.end(),
                                        [](const SystemSummary& s) { return s.feasible_iterations > 0; });
  if (!anything_ran) return out + " \u2014 NOTHING was measured: no system ran an iteration";
  if (summary.backend == "cuda") return out + " \u2014 figures are measured on GPUs";
  return out + " \u2014 figures are MODELLED, not measured";
}

std::string console_summary(const RunSummary& unsafe_summary, const ConsoleLayout& layout) {
  const RunSummary summary = for_console(unsafe_summary);
  const SystemsTable systems = systems_table(summary, layout);

  const int iterations = summary.systems.empty() ? 0 : summary.systems.front().iterations;
  std::string out = fmt::format("{} \u2014 {}, {}, {} iteration{}\n", summary.scenario, summary.cluster,
                                summary.model, iterations, iterations == 1 ? "" : "s");
  out += backend_statement(summary) + "\n";
  out += summary.hardware_profile + "\n";
  if (summary.planner_error > 0)
    out += fmt::format(
        "planner error: every system planned with cost terms off by up to {:g} % (the simulator charges the "
        "exact ones)\n",
        100 * summary.planner_error);
  if (const std::string line = long_documents_statement(summary.long_documents); !line.empty())
    out += line + "\n";
  out += "\n";
  const std::string prose_before = out;
  out.clear();
  out +=
      "speed-up = baseline mean iteration time / system mean iteration time; "
      "NIC util (per NIC) and NVLink util (per GPU) = bytes / (nominal bandwidth \u00b7 time in the "
      "layers)\n";
  if (!systems.left_out.empty()) {
    std::string names;
    for (const std::string& title : systems.left_out) names += (names.empty() ? "" : ", ") + title;
    out += fmt::format("not shown at {} columns: {} (run with --wide, or read report.html)\n", layout.width,
                       names);
  }
  out += "\n";
  out += best_baseline_text(summary);
  out += iteration_parts_text(summary);
  out += moe_layer_text(summary);
  if (const std::vector<std::string> lines = simulation_statements(summary); !lines.empty()) {
    for (std::size_t i = 0; i < lines.size(); ++i) out += (i == 0 ? "" : "  ") + lines[i] + "\n";
    out += "\n";
  }
  out += layouts_block(summary);
  out += options_text(summary);
  out += gates_text(summary);
  if (layout.wide) return prose_before + render_text(systems.table) + out;
  // The table is sized to the width already; the prose around it is wrapped at spaces.
  return wrap_text(prose_before, layout.width) + render_text(systems.table) + wrap_text(out, layout.width);
}

}  // namespace zb::reports
