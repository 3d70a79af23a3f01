#include "reports/text_table.hpp"

#include <algorithm>

namespace zb::reports {
namespace {

Align alignment_of(const TextTable& table, std::size_t column) {
  return column < table.align.size() ? table.align[column] : Align::left;
}

std::string padded(const std::string& cell, std::size_t width, Align align) {
  const std::size_t shown = display_width(cell);
  const std::string fill(width > shown ? width - shown : 0, ' ');
  return align == Align::right ? fill + cell : cell + fill;
}

std::string escape_pipes(const std::string& cell) {
  std::string out;
  for (const char c : cell) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::size_t display_width(const std::string& text) {
  // Continuation bytes of UTF-8 are 10xxxxxx; every other byte starts a code point.
  return static_cast<std::size_t>(std::count_if(
      text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0U) != 0x80U; }));
}

std::string render_text(const TextTable& table, const std::string& indent) {
  std::vector<std::size_t> widths(table.header.size(), 0);
  for (std::size_t c = 0; c < table.header.size(); ++c) widths[c] = display_width(table.header[c]);
  for (const auto& row : table.rows) {
    for (std::size_t c = 0; c < row.size() && c < widths.size(); ++c)
      widths[c] = std::max(widths[c], display_width(row[c]));
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out = indent;
    for (std::size_t c = 0; c < widths.size(); ++c) {
      const std::string cell = c < cells.size() ? cells[c] : "";
      const bool last = c + 1 == widths.size();
      // The last column is not padded on the left-aligned side, so lines carry no trailing blanks.
      out += last && alignment_of(table, c) == Align::left ? cell
                                                           : padded(cell, widths[c], alignment_of(table, c));
      if (!last) out += "  ";
    }
    return out + "\n";
  };
  std::string out = line(table.header);
  std::size_t total = 0;
  for (const std::size_t width : widths) total += width;
  total += widths.empty() ? 0 : 2 * (widths.size() - 1);
  out += indent + std::string(total, '-') + "\n";
  for (const auto& row : table.rows) out += line(row);
  return out;
}

std::string render_markdown(const TextTable& table) {
  std::string out = "|";
  for (const auto& cell : table.header) out += " " + escape_pipes(cell) + " |";
  out += "\n|";
  for (std::size_t c = 0; c < table.header.size(); ++c)
    out += alignment_of(table, c) == Align::right ? "---:|" : "---|";
  out += "\n";
  for (const auto& row : table.rows) {
    out += "|";
    for (std::size_t c = 0; c < table.header.size(); ++c)
      out += " " + escape_pipes(c < row.size() ? row[c] : "") + " |";
    out += "\n";
  }
  return out;
}

}  // namespace zb::reports
