#include "reports/progress_bar.hpp"

#include <fmt/format.h>

#include "reports/terminal_text.hpp"

namespace zb::reports {
namespace {

// Carriage return, then "erase to the end of the line": the cursor is back where the bar started.
constexpr const char* erase_line = "\r\033[K";

}  // namespace

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
  const std::string text =
      fmt::format("{}[{}] {}  iteration {}/{}  ETA {:.0f}s", erase_line, bar, terminal_field(last_.system),
                  last_.iteration + 1, last_.iterations, eta);
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
