#pragma once
// How the commands print. Text goes through reports::terminal_text (no control character from a scenario
// or report file reaches the terminal) and a failed write is an error, not a silent success: a full disk
// or a closed pipe (`zeppelin-bench run ... | head -1` after head exits) on standard output exits 3.
#include <string>
#include <string_view>

#include "core/common/error.hpp"

namespace zb::cli {

// Called first in main: a closed pipe then fails the write with EPIPE (reported, exit 3) instead of
// killing the process with SIGPIPE, which would skip the exit code and anything not yet done.
void ignore_broken_pipes();

// Writes `text` to standard output at once (one write, so a reader that takes only the first line still
// receives all of it) and throws zb::Error (exit 3) when that fails.
void write_stdout(std::string_view text);

// Flushes standard output and throws zb::Error (exit 3) if any write to it failed so far: main's last
// check, covering every command's output (printf's errors are otherwise ignored).
void check_stdout();

// One progress line of a long command (calibrate, qualify) on standard error, flushed at once so that it
// shows while the work goes on. Not standard output: that holds the command's result.
void print_progress(const std::string& line);
// Prints each problem of `error` as "error: ..." on standard error, control characters escaped.
void print_problems(const Error& error);

}  // namespace zb::cli
