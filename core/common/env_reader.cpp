#include "core/common/env_reader.hpp"

#include <charconv>
#include <cstring>
#include <stdexcept>

namespace zb {

Location env_location(const char* name) {
  Location where;
  where.json_path = std::string("environment ") + name;
  return where;
}

void read_env_integer(const char* name, int& into) {
  const char* text = std::getenv(name);
  if (text == nullptr) return;
  const char* end = text + std::strlen(text);
  int value = 0;
  const auto [ptr, ec] = std::from_chars(text, end, value);
  if (ec != std::errc{} || ptr != end || ptr == text)
    throw_input_error(env_location(name), std::string("'") + text + "' is not an integer");
  into = value;
}

void read_env_number(const char* name, double& into) {
  const char* text = std::getenv(name);
  if (text == nullptr) return;
  try {
    std::size_t used = 0;
    const double value = std::stod(text, &used);
    if (used != std::string(text).size()) throw std::invalid_argument(text);
    into = value;
  } catch (const std::logic_error&) {
    throw_input_error(env_location(name), std::string("'") + text + "' is not a valid number");
  }
}

}  // namespace zb
