#include "cli/table.hpp"

#include <algorithm>

namespace zb::cli {
namespace {

std::size_t display_width(const std::string& text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0u) != 0x80u;  // skip UTF-8 continuation bytes
  }));
}

}  // namespace

void print_table(std::FILE* out, const TableRow& header, const std::vector<TableRow>& rows) {
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
