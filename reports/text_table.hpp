#pragma once
// Plain-text and Markdown tables for the console summary and `compare`. Columns are padded to their widest
// cell counted in UTF-8 code points, so "µs", "×" and "−" do not shift the columns; numbers align right.
#include <string>
#include <vector>

namespace zb::reports {

enum class Align { left, right };

struct TextTable {
  std::vector<std::string> header;
  std::vector<Align> align;  // per column; missing entries are left-aligned
  std::vector<std::vector<std::string>> rows;
};

// Two spaces between columns, a dashed rule under the header, one line per row, each ending in '\n'.
[[nodiscard]] std::string render_text(const TextTable& table, const std::string& indent = "");
// GitHub-flavoured Markdown; '|' inside cells is escaped.
[[nodiscard]] std::string render_markdown(const TextTable& table);

// Number of code points of a UTF-8 string (what a terminal shows for the text we print).
[[nodiscard]] std::size_t display_width(const std::string& text);

}  // namespace zb::reports
