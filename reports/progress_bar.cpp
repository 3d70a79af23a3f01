#include "reports/progress_bar.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "reports/terminal_size.hpp"
#include "reports/terminal_text.hpp"

namespace zb::reports {
namespace {

// Carriage return, then "erase to the end of the line": the cursor is back where the bar started.
constexpr const char* erase_line = "\r\033[K";
constexpr int bar_width = 24;

// `text` cut to one column short of the terminal's width: a line that fills it leaves the cursor past its
// end on some terminals, and a longer one wraps, after which "\r" returns to the start of its last piece
// only, so every redraw would leave a line behind. Cut at a code point, not inside one.
std::string fitted(std::string text, std::FILE* out) {
  const std::size_t columns = std::max<std::size_t>(terminal_columns(out, 80), 11) - 1;
  std::size_t points = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0U) == 0x80U) continue;
    if (++points > columns) return text.substr(0, i);
  }
  return text;
}

}  // namespace

bool ProgressBar::can_redraw(std::FILE* out) {
  if (::isatty(fileno(out)) == 0) return false;
  const char* term = std::getenv("TERM");
  return term == nullptr || std::strcmp(term, "dumb") != 0;  // a dumb terminal has no "erase line"
}

ProgressBar::ProgressBar(std::FILE* out, bool draw)
    : out_(out), enabled_(draw), start_(std::chrono::steady_clock::now()) {}

ProgressBar::~ProgressBar() {
  clear();
}

void ProgressBar::update(const ProgressPoint& point) {
  if (!enabled_) return;
  last_ = point;
  draw();
}

void ProgressBar::draw() {
  const int total = last_.systems * last_.iterations;
  const int done = last_.system_index * last_.iterations + last_.iteration;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double eta = done > 0 ? elapsed / done * (total - done) : 0;
  const int filled = total > 0 ? bar_width * done / total : 0;
  const std::string bar = std::string(static_cast<std::size_t>(filled), '#') +
                          std::string(static_cast<std::size_t>(bar_width - filled), '.');
  const std::string text =
      fmt::format("[{}] {}  iteration {}/{}  ETA {:.0f}s", bar, terminal_field(last_.system),
                  last_.iteration + 1, last_.iterations, eta);
  std::fputs((erase_line + fitted(text, out_)).c_str(), out_);
  std::fflush(out_);
  shown_ = true;
}

void ProgressBar::finish() {
  if (!enabled_ || !shown_) return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const std::string text =
      fmt::format("[{}] {} system{} x {} iteration{}, {:.1f} s", std::string(bar_width, '#'), last_.systems,
                  last_.systems == 1 ? "" : "s", last_.iterations, last_.iterations == 1 ? "" : "s", elapsed);
  std::fputs((erase_line + fitted(text, out_) + "\n").c_str(), out_);
  std::fflush(out_);
  shown_ = false;
}

void ProgressBar::note(std::string_view line) {
  const bool redraw = shown_;
  clear();
  const std::string text = terminal_field(line) + "\n";
  std::fputs(text.c_str(), out_);
  if (redraw) draw();
  std::fflush(out_);
}

void ProgressBar::clear() {
  if (!enabled_ || !shown_) return;
  std::fputs(erase_line, out_);
  std::fflush(out_);
  shown_ = false;
}

}  // namespace zb::reports
