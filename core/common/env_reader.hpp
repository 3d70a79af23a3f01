#pragma once
// Reading the executors' settings from environment variables (ZB_REF_*, ZB_CUDA_*, ZB_NIC*): every bad
// value is bad input (exit 2) whose location is "environment NAME", like a JSON path in a scenario.
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <utility>

#include "core/common/error.hpp"

namespace zb {

// Where a bad environment value is reported: "environment NAME".
[[nodiscard]] Location env_location(const char* name);

// NAME as a whole decimal integer into `into`; unset leaves `into` as it is.
void read_env_integer(const char* name, int& into);

// NAME as a number (std::stod, the whole text) that T holds exactly; unset leaves `into` as it is.
void read_env_number(const char* name, double& into);
template <typename T>
void read_env_number(const char* name, T& into) {
  double value = static_cast<double>(into);
  const char* text = std::getenv(name);
  if (text == nullptr) return;
  read_env_number(name, value);
  if (static_cast<double>(static_cast<T>(value)) != value)
    throw_input_error(env_location(name), std::string("'") + text + "' is not a valid number");
  into = static_cast<T>(value);
}

// NAME as one of the named choices; unset leaves `into` as it is. Anything else is bad input that lists
// the choices in the order given.
template <typename E>
void read_env_choice(const char* name, std::initializer_list<std::pair<const char*, E>> choices, E& into) {
  const char* text = std::getenv(name);
  if (text == nullptr) return;
  std::string names;
  for (const auto& [word, value] : choices) {
    if (text == std::string(word)) {
      into = value;
      return;
    }
    names += (names.empty() ? "" : ", ") + std::string(word);
  }
  throw_input_error(env_location(name), std::string("'") + text + "' is not one of " + names);
}

}  // namespace zb
