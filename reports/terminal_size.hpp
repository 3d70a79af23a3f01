#pragma once
// How many columns the terminal behind a stream has: the progress bar must stay within one line, and the
// console summary is sized to it (reports/console_table.hpp).
#include <cstddef>
#include <cstdio>

namespace zb::reports {

// The terminal's width (TIOCGWINSZ) when `out` is one; else COLUMNS when it is a positive number (a
// user's or a CI's statement of the width it shows); else `fallback`.
[[nodiscard]] std::size_t terminal_columns(std::FILE* out, std::size_t fallback);

}  // namespace zb::reports
