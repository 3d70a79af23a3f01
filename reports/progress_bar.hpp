#pragma once
// The one-line progress bar `run` draws on stderr while it plans and simulates: a bar, the system, the
// iteration and an ETA, redrawn in place with "\r\033[K". Anything else printed to the same terminal
// would land after the bar's text on its line, so every other line goes through the bar: note() clears
// the bar, prints the line and redraws it below, and clear() erases it before the summary is printed.
#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>

namespace zb::reports {

struct ProgressPoint {
  std::string system;    // the system's label (user-supplied: printed through terminal_field)
  int system_index = 0;  // 0-based, of `systems`
  int systems = 0;
  int iteration = 0;  // 0-based, of `iterations`
  int iterations = 0;
};

class ProgressBar {
 public:
  // `draw` false (not a terminal, --quiet): update() and clear() print nothing, note() prints its line.
  ProgressBar(std::FILE* out, bool draw);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // Whether `out` is a terminal that can redraw a line in place (not TERM=dumb): where draw may be true.
  [[nodiscard]] static bool can_redraw(std::FILE* out);

  void update(const ProgressPoint& point);
  // Prints `line` (and a newline) on its own line above the bar, then redraws the bar where it was.
  void note(std::string_view line);
  // The bar drawn full with what was done and how long it took ("[####] 4 systems x 3 iterations,
  // 12.3 s"), left on its line: the run is over. Nothing when the bar was never drawn.
  void finish();
  // Erases the bar so the next output starts at the beginning of an empty line; update() draws it again.
  void clear();

 private:
  void draw();

  std::FILE* out_;
  bool enabled_;
  bool shown_ = false;
  ProgressPoint last_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace zb::reports
