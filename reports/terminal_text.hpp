#pragma once
// Text from a scenario or a report file (names, descriptions, labels, GPU and preset names, paths) is
// printed to a terminal, and a terminal obeys control characters: "\x1b[2J" clears the screen, "\r"
// overwrites a line, "\n" starts a fake one ("all gates passed"). Everything user-supplied that reaches
// the console goes through these functions, which show each control character as a visible escape
// instead of letting the terminal act on it. The JSON and HTML reports keep the original text (they
// escape it in their own syntax).
#include <string>
#include <string_view>

namespace zb::reports {

// One field printed inside a line: every control character, newline and tab included, is escaped.
// Escapes: C0 bytes and DEL as "\xHH", C1 and bidirectional-override code points as "\uHHHH", bytes
// that are not UTF-8 as "\xHH". Other text (UTF-8 "µs", "×") passes unchanged.
[[nodiscard]] std::string terminal_field(std::string_view text);

// Whole lines of output: the same, but '\n' and '\t' are kept, since the text is ours and laid out in lines.
[[nodiscard]] std::string terminal_text(std::string_view text);

}  // namespace zb::reports
