#pragma once
// What every fuzz target shares: the one outcome a parser may have besides success. Bad input is a
// zb::Error with exit code 2 (the user fixes the file); anything else that escapes — another exception,
// an Error that claims a runtime failure — is a finding, so it is reported and the process aborts, which
// libFuzzer records as a crash with the input that caused it.
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "core/common/error.hpp"

namespace zb::fuzz {

template <typename Parse>
int accept_input_errors(Parse&& parse) {
  try {
    parse();
  } catch (const Error& e) {
    // ZB_FUZZ_PRINT_ERRORS=1 shows why an input is refused, to check what a seed reaches.
    if (e.code() == ExitCode::bad_input) {
      if (std::getenv("ZB_FUZZ_PRINT_ERRORS") != nullptr) std::fprintf(stderr, "bad input: %s\n", e.what());
      return 0;
    }
    std::fprintf(stderr, "fuzz: a zb::Error with exit code %d instead of 2 (bad input):\n%s\n",
                 static_cast<int>(e.code()), e.what());
    std::abort();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz: an exception that is not zb::Error escaped the parser: %s\n", e.what());
    std::abort();
  }
  return 0;
}

}  // namespace zb::fuzz
