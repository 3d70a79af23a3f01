#pragma once
// The summary `zeppelin-bench run` prints when it finishes: which backend produced the figures (and
// whether they are simulated), one row per system with its speed-up against the best baseline and then
// against every baseline (strongest first), the best baseline and each system against it in words, the
// options every system ran with ("auto" resolved), then the gates.
#include <string>

#include "reports/console_table.hpp"
#include "reports/summary.hpp"

namespace zb::reports {

// One line saying what produced the numbers, e.g. "backend: sim (simulated by SimGrid 3.32 ...) — figures
// are SIMULATED, not measured". Shared by the console and the HTML header.
[[nodiscard]] std::string backend_statement(const RunSummary& summary);

// The text `run` prints, fitted to `layout`: the systems table keeps the columns that fit its width
// (reports/console_table.hpp) and names the others, and the prose is wrapped at spaces; with
// layout.wide, every column and unwrapped lines. User-supplied strings in it (names, labels, GPU names,
// options) have their control characters escaped (reports/terminal_text.hpp), so a scenario cannot drive
// the terminal.
[[nodiscard]] std::string console_summary(const RunSummary& summary, const ConsoleLayout& layout);

}  // namespace zb::reports
