#include "reports/progress_bar.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "reports/terminal_text.hpp"

namespace zb::reports {
namespace {

// Carriage return, then "erase to the end of the line": the cursor is back where the bar started.
constexpr const char* erase_line = "\r\033[K";

// The terminal's width in columns: a line longer than that wraps, and "\r" then returns to the start of
// its last piece only, so every redraw would leave a line behind. COLUMNS, then 80, where it cannot say.
int terminal_columns(std::FILE* out) {
  winsize size{};
  if (::ioctl(fileno(out), TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  if (const char* columns = std::getenv("COLUMNS")) {
    const int value = std::atoi(columns);
    if (value > 0) return value;
  }
  return 80;
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
  constexpr int width = 24;
  const int filled = total > 0 ? width * done / total : 0;
  const std::string bar = std::string(static_cast<std::size_t>(filled), '#') +
                          std::string(static_cast<std::size_t>(width - filled), '.');
  std::string text = fmt::format("[{}] {}  iteration {}/{}  ETA {:.0f}s", bar, terminal_field(last_.system),
                                 last_.iteration + 1, last_.iterations, eta);
  // One column short of the width: a line that fills it leaves the cursor past its end on some terminals.
  const auto columns = static_cast<std::size_t>(std::max(terminal_columns(out_) - 1, 10));
  if (text.size() > columns) text = text.substr(0, columns);  // the bar and labels are ASCII
  text.insert(0, erase_line);
  std::fputs(text.c_str(), out_);
  std::fflush(out_);
  shown_ = true;
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
