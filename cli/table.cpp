#include "cli/table.hpp"

#include <algorithm>

#include "reports/terminal_text.hpp"
#include "reports/text_table.hpp"

namespace zb::cli {

void print_table(std::FILE* out, const TableRow& header, const std::vector<TableRow>& unsafe_rows) {
  // Cells can come from files (a scenario's description): escaped before they are measured and printed.
  std::vector<TableRow> rows = unsafe_rows;
  for (TableRow& row : rows) {
    for (std::string& cell : row) cell = reports::terminal_field(cell);
  }
  using reports::display_width;
  std::vector<std::size_t> widths(header.size(), 0);
  auto measure = [&widths](const TableRow& row) {
    for (std::size_t i = 0; i < row.size() && i < widths.size(); ++i)
      widths[i] = std::max(widths[i], display_width(row[i]));
  };
  measure(header);
  for (const TableRow& row : rows) measure(row);

  auto print_row = [&](const TableRow& row) {
    std::string line;
    for (std::size_t i = 0; i < row.size() && i < widths.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - display_width(row[i]) + 2, ' ');
    }
    std::fprintf(out, "%s\n", line.c_str());
  };
  print_row(header);
  for (const TableRow& row : rows) print_row(row);
}

}  // namespace zb::cli
