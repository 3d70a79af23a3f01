#pragma once
// Prose for a terminal of a given width: the console summary's sentences (the backend statement, the
// long-document shares, the options as run) are one logical line each and run to 150-270 characters,
// which a terminal wraps mid-word at its edge. wrap_text breaks them at spaces instead.
#include <cstddef>
#include <string>
#include <string_view>

namespace zb::reports {

// Every line of `text` longer than `width` columns (UTF-8 code points, as display_width counts) broken
// at spaces; a continuation line starts with the line's own leading spaces plus `hanging` more, so a
// wrapped entry of an indented list stays visibly one entry. A word longer than the room left stays whole
// on a line of its own (a path is not cut), and a number keeps its unit ("106 ms", "0.0 %"). Lines that fit,
// and their trailing newlines, are unchanged.
[[nodiscard]] std::string wrap_text(std::string_view text, std::size_t width, std::size_t hanging = 2);

}  // namespace zb::reports
