#include "reports/text_wrap.hpp"

#include <vector>

#include "reports/text_table.hpp"

namespace zb::reports {
namespace {

// "106 ms", "0.0 %", "187 k": a number and its unit are read as one, so a line does not end between them.
// A unit is a short word after a word ending in a digit (trailing punctuation aside).
bool is_unit_of(const std::string& previous, const std::string& word) {
  if (previous.empty() || word.empty()) return false;
  if (previous.back() < '0' || previous.back() > '9') return false;
  if (word.front() >= '0' && word.front() <= '9') return false;
  const std::size_t end = word.find_last_not_of(",;:.)");
  return end != std::string::npos && display_width(word.substr(0, end + 1)) <= 3;
}

// A word and the spaces that stood before it ("PASS  speedup" keeps its two spaces where no line ends).
struct Word {
  std::string gap;
  std::string text;
};

std::string wrap_line(std::string_view line, std::size_t width, std::size_t hanging) {
  const std::string whole(line);
  if (display_width(whole) <= width) return whole;
  const std::size_t lead = std::min(line.find_first_not_of(' '), line.size());
  const std::string next_indent(lead + hanging, ' ');
  std::vector<Word> words;
  for (std::size_t at = lead; at < line.size();) {
    const std::size_t start = std::min(line.find_first_not_of(' ', at), line.size());
    const std::size_t end = std::min(line.find(' ', start), line.size());
    if (end == start) break;  // trailing spaces
    Word word{std::string(line.substr(at, start - at)), std::string(line.substr(start, end - start))};
    if (!words.empty() && is_unit_of(words.back().text, word.text))
      words.back().text += word.gap + word.text;
    else
      words.push_back(std::move(word));
    at = end;
  }
  std::string out(lead, ' ');
  std::size_t used = lead;
  bool line_empty = true;
  for (const Word& word : words) {
    const std::size_t w = display_width(word.text);
    if (!line_empty && used + word.gap.size() + w > width) {
      out += "\n" + next_indent;
      used = next_indent.size();
      line_empty = true;
    }
    if (!line_empty) {
      out += word.gap;
      used += word.gap.size();
    }
    out += word.text;
    used += w;
    line_empty = false;
  }
  return out;
}

}  // namespace

std::string wrap_text(std::string_view text, std::size_t width, std::size_t hanging) {
  std::string out;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    out += wrap_line(text.substr(at, end - at), width, hanging);
    if (end < text.size()) out += '\n';
    at = end + 1;
  }
  return out;
}

}  // namespace zb::reports
