#include "reports/terminal_size.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <cstring>

namespace zb::reports {

std::size_t terminal_columns(std::FILE* out, std::size_t fallback) {
  winsize size{};
  if (::isatty(fileno(out)) != 0 && ::ioctl(fileno(out), TIOCGWINSZ, &size) == 0 && size.ws_col > 0)
    return size.ws_col;
  if (const char* columns = std::getenv("COLUMNS")) {
    std::size_t value = 0;
    const char* end = columns + std::strlen(columns);
    const auto [at, error] = std::from_chars(columns, end, value);
    if (error == std::errc() && at == end && value > 0) return value;
  }
  return fallback;
}

}  // namespace zb::reports
