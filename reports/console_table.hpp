#pragma once
// The systems table of the console summary, sized to the terminal. Every column has a rank of
// importance; when the whole table is wider than the terminal, the least important columns are left out
// until it fits, and the summary names them (they are all in report.json and report.html, and `--wide`
// prints them). Off a terminal the width is 100 columns, so a CI log or a pasted summary does not wrap.
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "reports/summary.hpp"
#include "reports/text_table.hpp"

namespace zb::reports {

struct ConsoleLayout {
  std::size_t width = 100;  // columns available: the terminal's, or 100 where there is no terminal
  bool wide = false;        // every column, mean and max of each utilisation, and no line wrapped

  // What `--wide` prints: the whole table, however wide (tests of the summary's content use it too).
  [[nodiscard]] static ConsoleLayout full() { return {std::numeric_limits<std::size_t>::max(), true}; }
};

struct SystemsTable {
  TextTable table;
  std::vector<std::string> left_out;  // titles of the columns that did not fit, most important first
};

// The table's columns in reading order: system, iteration time, tokens/s, TFLOP/s/GPU, MFU, vs best, vs
// each baseline (strongest first), attention imbalance, NIC and NVLink utilisation, planner time. The
// order of importance, from the first kept to the first left out: system, iteration time, vs best, MFU,
// attention imbalance, NVLink max, NIC max, planner, tokens/s, vs each baseline (weakest left out
// first), TFLOP/s/GPU. A user-supplied string in `summary` must already be escaped for the terminal.
[[nodiscard]] SystemsTable systems_table(const RunSummary& summary, const ConsoleLayout& layout);

}  // namespace zb::reports
